"""A 127.0.0.1 TCP proxy whose connections a test can cut: a database or a Temporal
frontend that goes away and comes back, for real."""

import asyncio
import ssl
import threading


class FlakyProxy:
    """127.0.0.1 TCP proxy on its own event loop thread; `cut()` aborts every connection
    and refuses new ones (accept, then reset) until `restore()`. With `tls`, it terminates TLS
    (tests/_tls.py: h2 over ALPN, a client certificate required) in front of a plaintext
    frontend, as a load balancer before a Temporal cluster does; `accepted` counts the
    connections that got through (with TLS: the handshakes that succeeded)."""

    def __init__(self, host: str, port: int, *, tls: ssl.SSLContext | None = None) -> None:
        self._target = (host, port)
        self._tls = tls
        self.accepted = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._open: set[asyncio.StreamWriter] = set()
        self.down = False
        self.refused = 0
        self.port = 0

    def start(self) -> None:
        self._thread.start()
        server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self._tls), self._loop
        ).result(10)
        self._server = server
        self.port = server.sockets[0].getsockname()[1]

    def cut(self) -> None:
        def _cut() -> None:
            self.down = True
            for w in list(self._open):
                w.transport.abort()

        self._loop.call_soon_threadsafe(_cut)

    def restore(self) -> None:
        self._loop.call_soon_threadsafe(setattr, self, "down", False)

    def close(self) -> None:
        def _close() -> None:
            self._server.close()
            for w in list(self._open):
                w.transport.abort()

        self._loop.call_soon_threadsafe(_close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            self.refused += 1
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        self.accepted += 1
        self._open.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                dst.transport.abort()
                self._open.discard(dst)

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
