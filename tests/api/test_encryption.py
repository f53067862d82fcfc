"""With AGENTRT_PAYLOAD_KEYS set, the A2A server connects through the one client factory:
a run it starts keeps only ciphertext in Temporal history."""

import base64
import uuid

from pydantic import SecretStr
from temporalio.testing import WorkflowEnvironment

from agentrt.api.settings import ApiSettings
from agentrt.core.temporal import connect
from agentrt.workers.compose import WorkerResources
from tests._cipher import assert_ciphertext_history
from tests.api.conftest import _serve, user_message

KEYS = "p1:" + base64.b64encode(b"p" * 32).decode()


async def test_a_run_started_over_a2a_is_ciphertext_in_history(
    temporal_env: WorkflowEnvironment, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    keyed = a2a_settings.replace(
        privacy={"payload_keys": SecretStr(KEYS)},
        temporal={"address": temporal_env.client.service_client.config.target_host},
    )
    marker = f"marker-{uuid.uuid4().hex[:12]}"
    async with _serve(await connect(keyed), keyed, a2a_parts, inject=False) as live:
        reply = await live.rpc("SendMessage", {"message": user_message(f"order 12? {marker}")})
        task = reply["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        rec = live.store.get(task["id"], None)
        assert rec is not None
    await assert_ciphertext_history(temporal_env.client, rec.workflow_id, marker)
