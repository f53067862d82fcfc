"""The operator API with payload keys, serving Temporal Web's codec (api/operator/codec.py):
a keyed client for the app and its worker, and the Web UI origin it admits."""

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.client import Client
from temporalio.converter import WorkflowSerializationContext

from agentrt.api.settings import ApiSettings
from agentrt.core.codec import EncryptionCodec
from agentrt.core.temporal import data_converter
from agentrt.workers.compose import WorkerResources
from tests.api.conftest import Live, _serve

PAYLOAD_KEYS = "p1:" + base64.b64encode(b"w" * 32).decode()


@asynccontextmanager
async def keyed_live(
    address: str, settings: ApiSettings, parts: WorkerResources, ui_origin: str
) -> AsyncIterator[Live]:
    """A live API whose Temporal client (and worker) encrypt every payload."""
    client = await Client.connect(address, data_converter=data_converter(PAYLOAD_KEYS))
    keyed = settings.replace(
        privacy={"payload_keys": PAYLOAD_KEYS}, codec={"ui_origins": ui_origin}
    )
    async with _serve(client, keyed, parts) as served:
        yield served


async def sealed_body(text: str, run: str = "") -> str:
    """A Payloads body of one payload sealed as the runtime seals one of `run` (bound to it;
    "" none)."""
    plain = Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(text).encode())
    codec = EncryptionCodec.from_spec(PAYLOAD_KEYS)
    if run:
        codec = codec.with_context(
            WorkflowSerializationContext(namespace="default", workflow_id=run)
        )
    sealed = await codec.encode([plain])
    return json_format.MessageToJson(Payloads(payloads=sealed))


async def start_input(plain: Client, run_id: str) -> str:
    """The run's start input as Temporal holds it (ciphertext), as a Payloads body: what
    Temporal Web sends the codec."""
    history = await plain.get_workflow_handle(run_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    return json_format.MessageToJson(started.input)


def opened(reply_json: dict[str, list[dict[str, str]]]) -> object:
    return json.loads(base64.b64decode(reply_json["payloads"][0]["data"]))
