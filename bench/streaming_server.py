"""An OpenAI-compatible server on 127.0.0.1 that streams (`stream: true`), in a thread:
each request plays the next script (the last one repeats), a script being text chunks,
pauses (seconds), GATE, where the reply waits until the test opens `gate`, and DROP,
where the server hangs up mid-reply."""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GATE = "<gate>"
DROP = "<drop>"  # the connection closes there, the reply unfinished
Step = str | float


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class StreamingServer:
    def __init__(self, *scripts: list[Step]) -> None:
        self.scripts = list(scripts)
        self.gate = threading.Event()
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def _script(self, body: dict[str, Any]) -> list[Step]:
        with self._lock:
            self.bodies.append(body)
            return self.scripts[min(len(self.bodies), len(self.scripts)) - 1]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                script = server._script(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    self._play(script)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the worker was killed mid-stream

            def _play(self, script: list[Step]) -> None:
                for step in script:
                    if step == DROP:
                        return
                    if step == GATE:
                        server.gate.wait(60)
                    elif isinstance(step, float):
                        threading.Event().wait(step)
                    else:
                        self.wfile.write(_chunk({"content": step}))
                        self.wfile.flush()
                self.wfile.write(_chunk({}, "stop"))
                usage = {"prompt_tokens": 7, "completion_tokens": len(script)}
                self.wfile.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode())
                self.wfile.write(b"\n\ndata: [DONE]\n\n")
                self.wfile.flush()

        return Handler


@contextmanager
def streaming(*scripts: list[Step]) -> Iterator[tuple[StreamingServer, str]]:
    """The server and its base URL (…/v1), for the block."""
    server = StreamingServer(*scripts)
    http = ThreadingHTTPServer(("127.0.0.1", 0), server.handler())
    http.daemon_threads = True
    thread = threading.Thread(target=http.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, f"http://127.0.0.1:{http.server_address[1]}/v1"
    finally:
        server.gate.set()
        http.shutdown()
        http.server_close()
