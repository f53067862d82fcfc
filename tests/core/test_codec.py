"""Payload encryption end to end: history holds ciphertext, the codec server shows it."""

import asyncio
import base64
import json
import uuid

import httpx
import pytest
import uvicorn
from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.core.codec import ENCODING, EncryptionCodec
from agentrt.core.codec_server import create_codec_app
from agentrt.core.devserver import free_port
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs import RunStore
from agentrt.workers.compose import Parts
from agentrt.workers.main import make_worker

KEYS = "p1:" + base64.b64encode(b"p" * 32).decode()
UI = "http://127.0.0.1:8233"


async def test_round_trip_passthrough_and_unknown_key() -> None:
    codec = EncryptionCodec.from_spec(KEYS)
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'"secret prompt"')
    [sealed] = await codec.encode([plain])
    assert sealed.metadata["encoding"] == ENCODING and b"secret" not in sealed.data
    assert await codec.decode([sealed]) == [plain]
    assert await codec.decode([plain]) == [plain]  # not ours: untouched
    other = EncryptionCodec.from_spec("p2:" + base64.b64encode(b"q" * 32).decode())
    with pytest.raises(ValueError, match="unknown key id"):
        await other.decode([sealed])


async def test_an_encrypted_run_keeps_ciphertext_in_history_and_the_codec_server_opens_it(
    temporal_env: WorkflowEnvironment, parts: Parts, settings: Settings
) -> None:
    target = temporal_env.client.service_client.config.target_host
    client = await Client.connect(target, data_converter=data_converter(KEYS))
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    prompt = f"what about my order? marker-{uuid.uuid4().hex[:8]}"
    async with make_worker(client, parts, settings.model_copy(update={"task_queue": queue})):
        view = await AgentRuntime(client, RunStore(parts.ctx), queue).run("auto", prompt)
    assert view.status is RunStatus.COMPLETED
    history = await temporal_env.client.get_workflow_handle(view.run_id).fetch_history()
    raw = history.to_json()
    assert "marker-" not in raw  # the server never saw the prompt in clear
    started = history.events[0].workflow_execution_started_event_attributes.input
    assert started.payloads[0].metadata["encoding"] == ENCODING

    port = free_port()
    app = create_codec_app(EncryptionCodec.from_spec(KEYS), [UI])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(250):  # bounded wait for the listener
            if server.started:
                break
            await asyncio.sleep(0.02)
        body = json_format.MessageToJson(Payloads(payloads=list(started.payloads)))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            decoded = await http.post(
                "/default/decode",
                content=body,
                headers={"Origin": UI, "content-type": "application/json"},
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
            bad = await http.post("/decode", content=b"not json")
            assert bad.status_code == 400
    finally:
        server.should_exit = True
        await task
