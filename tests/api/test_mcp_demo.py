"""The issue's "done means", on the demo's own profiles and rules (workers/profiles.yaml,
workers/demo_rules.yaml, what a fresh clone serves): an MCP client lists the published
`support` profile, calls it, sees the run wait for approval, and gets the answer once an
operator approves through the HTTP API."""

from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from agentrt.core.settings import Settings
from tests.api.conftest import serving
from tests.api.mcp_helpers import mcp_client, said, status_until, text
from tests.api.ops_helpers import DECIDER, http, name, token

DEFAULTS = Settings()  # the demo's files, as a fresh clone has them


async def test_an_mcp_client_gets_the_demo_refund_after_an_operator_approves(
    client: Client, a2a_settings: ApiSettings
) -> None:
    demo = a2a_settings.replace(
        worker={"profiles_file": DEFAULTS.worker.profiles_file},
        providers={
            "rules_file": DEFAULTS.providers.rules_file,
            "scripted_providers": "scripted",
            "provider_answer_levels": "",
        },
    )
    async with serving(client, demo) as live:
        secret = token(live, name("ide"), *DECIDER, profiles=["support"])
        async with mcp_client(live, secret) as mcp:
            tools = {t.name: t for t in (await mcp.list_tools()).tools}
            assert set(tools) == {"support", "agentrt_run_status"}
            support = tools["support"].annotations
            assert support is not None and support.destructive_hint is True
            waiting = said(await mcp.call_tool("support", {"prompt": "Please refund order 1042"}))
            assert waiting["status"] == "WAITING_FOR_APPROVAL"
            run_id = waiting["run_id"]
            async with http(live, secret) as api:
                view = (await api.get(f"/runs/{run_id}")).json()
                digest = view["pending_approval"]["turn_digest"]
                ok = await api.post(
                    f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": digest}
                )
                assert ok.status_code == 200, ok.text
            done = await status_until(mcp, run_id, "COMPLETED")
    assert text(done).startswith("Done: order 1042 was refunded.")
