"""Payload encryption end to end: history holds ciphertext, the codec server shows it."""

import asyncio
import base64
import contextlib
import json
import os
import socket
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.core.codec import ENCODING, EncryptionCodec, PlaintextPayloadError
from agentrt.core.codec_server import create_codec_app
from agentrt.core.devserver import free_port
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.cli import main
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests._asgi import running

KEYS = "p1:" + base64.b64encode(b"p" * 32).decode()
UI = "http://127.0.0.1:8233"
TOKEN = "codec-token-5b0e9c1d"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@contextlib.asynccontextmanager
async def codec_server(token: str | None) -> AsyncIterator[httpx.AsyncClient]:
    """The codec app over real HTTP on 127.0.0.1."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = create_codec_app(EncryptionCodec.from_spec(KEYS), [UI], token)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error"))
    # Temporal Web and the CLI name the namespace on every request (issue 25).
    async with (
        running(server, sock),
        httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", headers={"X-Namespace": "default"}
        ) as http,
    ):
        yield http


async def _sealed_body(text: str) -> str:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(text).encode())
    sealed = await EncryptionCodec.from_spec(KEYS).encode([plain])
    return json_format.MessageToJson(Payloads(payloads=sealed))


async def test_round_trip_plaintext_refused_and_unknown_key() -> None:
    codec = EncryptionCodec.from_spec(KEYS)
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"secret prompt"')
    [sealed] = await codec.encode([plain])
    assert sealed.metadata["encoding"] == ENCODING and b"secret" not in sealed.data
    assert await codec.decode([sealed]) == [plain]
    with pytest.raises(PlaintextPayloadError):  # not encrypted: refused (issue 25)
        await codec.decode([plain])
    other = EncryptionCodec.from_spec("p2:" + base64.b64encode(b"q" * 32).decode())
    with pytest.raises(ValueError, match="unknown key id"):
        await other.decode([sealed])


async def test_an_encrypted_run_keeps_ciphertext_in_history_and_the_codec_server_opens_it(
    temporal_env: WorkflowEnvironment, parts: WorkerResources, settings: Settings
) -> None:
    target = temporal_env.client.service_client.config.target_host
    client = await Client.connect(target, data_converter=data_converter(KEYS))
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    prompt = f"what about my order? marker-{uuid.uuid4().hex[:8]}"
    async with make_worker(client, parts, settings.replace(temporal={"task_queue": queue})):
        view = await AgentRuntime(client, RunStore(parts.ctx), queue).run("auto", prompt)
    assert view.status is RunStatus.COMPLETED
    history = await temporal_env.client.get_workflow_handle(view.run_id).fetch_history()
    raw = history.to_json()
    assert "marker-" not in raw  # the server never saw the prompt in clear
    started = history.events[0].workflow_execution_started_event_attributes.input
    assert started.payloads[0].metadata["encoding"] == ENCODING

    body = json_format.MessageToJson(Payloads(payloads=list(started.payloads)))
    async with codec_server(TOKEN) as http:
        decoded = await http.post(
            "/default/decode",
            content=body,
            headers={"Origin": UI, "content-type": "application/json", **AUTH},
        )
        assert decoded.status_code == 200
        assert decoded.headers["access-control-allow-origin"] == UI
        payload = json_format.Parse(decoded.text, Payloads()).payloads[0]
        assert json.loads(payload.data)["prompt"] == prompt
        preflight = await http.options(
            "/decode",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert "access-control-allow-origin" not in preflight.headers
        bad = await http.post("/decode", content=b"not json", headers=AUTH)
        assert bad.status_code == 400


async def test_decode_and_encode_need_the_bearer_token() -> None:
    body = await _sealed_body("secret prompt")
    async with codec_server(TOKEN) as http:
        for path in ("/decode", "/default/decode", "/encode", "/default/encode"):
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
                refused = await http.post(path, content=body, headers={"Origin": UI, **headers})
                # Encoding is for workers and clients only, and none has a token here
                # (tests/security/test_codec_encode.py).
                assert refused.status_code == (403 if "encode" in path else 401), (path, headers)
                assert "secret" not in refused.text
                # The browser can read the refusal (CORS headers on the error too).
                assert refused.headers["access-control-allow-origin"] == UI
        opened = await http.post("/decode", content=body, headers=AUTH)
        assert opened.status_code == 200
        assert (
            "secret prompt"
            in base64.b64decode(json.loads(opened.text)["payloads"][0]["data"]).decode()
        )


async def test_the_web_ui_preflight_passes_without_a_token_and_allows_authorization() -> None:
    async with codec_server(TOKEN) as http:
        preflight = await http.options(
            "/default/decode",
            headers={
                "Origin": UI,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type,x-namespace",
            },
        )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == UI
    allowed = preflight.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "x-namespace" in allowed


async def test_tampered_ciphertext_is_a_400_with_a_short_message() -> None:
    body = json.loads(await _sealed_body("secret prompt"))
    data = bytearray(base64.b64decode(body["payloads"][0]["data"]))
    data[-1] ^= 0x01
    body["payloads"][0]["data"] = base64.b64encode(bytes(data)).decode()
    async with codec_server(TOKEN) as http:
        reply = await http.post("/decode", json=body, headers=AUTH)
        truncated = dict(body, payloads=[dict(body["payloads"][0], data="AAAA")])
        short = await http.post("/decode", json=truncated, headers=AUTH)
    assert reply.status_code == 400, reply.text
    assert "altered" in reply.json()["error"] and "Traceback" not in reply.text
    assert len(reply.text) < 200
    assert short.status_code == 400, short.text


async def test_a_dev_server_without_a_token_still_decodes() -> None:
    async with codec_server(None) as http:
        opened = await http.post("/decode", content=await _sealed_body("dev prompt"))
    assert opened.status_code == 200


def test_the_codec_server_command_refuses_to_start_without_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("AGENTRT_PAYLOAD_KEYS", KEYS)
    monkeypatch.setenv("AGENTRT_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("AGENTRT_CODEC_TOKEN", raising=False)
    code = main(["codec-server", "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 2
    assert "AGENTRT_CODEC_TOKEN is not set" in err and "--dev-no-token" in err
    assert "Traceback" not in err


async def test_dev_no_token_serves_without_a_token_even_with_one_set(tmp_path: Path) -> None:
    """`codec-server --dev-no-token` did nothing while AGENTRT_CODEC_TOKEN was set (issue 28):
    the dev UI, which cannot send a token, was refused. The flag wins."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    env |= {
        "AGENTRT_PAYLOAD_KEYS": KEYS,
        "AGENTRT_CODEC_TOKEN": "inherited-token",
        "COLUMNS": "200",
    }
    cmd = [sys.executable, "-m", "agentrt.starter.cli", "codec-server", "--port", str(port)]
    proc = await asyncio.create_subprocess_exec(
        *cmd, "--dev-no-token", env=env, cwd=tmp_path, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        banner = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert "NO TOKEN (dev only)" in banner, banner
        async with httpx.AsyncClient(headers={"X-Namespace": "default"}) as http:
            for _ in range(100):  # the banner comes just before the listener opens
                with contextlib.suppress(httpx.ConnectError):
                    body = await _sealed_body("dev prompt")
                    opened = await http.post(f"http://127.0.0.1:{port}/decode", content=body)
                    break
                await asyncio.sleep(0.05)
        assert opened.status_code == 200, opened.text
        assert json.loads(base64.b64decode(opened.json()["payloads"][0]["data"])) == "dev prompt"
    finally:
        proc.terminate()
        await proc.wait()
