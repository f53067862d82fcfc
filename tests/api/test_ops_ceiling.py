"""The operator API under an installation's raised iteration ceiling (issue 30):
`POST /runs` takes what AGENTRT_MAX_ITERATIONS_CEILING allows, and refuses past it naming
the setting; the run then goes the whole length on a worker under the same ceiling."""

from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from tests.api.conftest import serving
from tests.api.ops_helpers import error_type, http, name, token, wait_status


async def test_post_runs_under_a_raised_ceiling(client: Client, a2a_settings: ApiSettings) -> None:
    raised = a2a_settings.replace(limits={"max_iterations_ceiling": 30})
    async with serving(client, raised) as live:
        who = name("alice")
        async with http(live, token(live, who, "runs:start", "runs:read")) as api:
            body = {"profile": "helper", "prompt": "loop forever"}
            over = await api.post("/runs", json={**body, "max_iterations": 31})
            assert over.status_code == 400, over.text
            assert error_type(over) == "invalid_request"
            assert "AGENTRT_MAX_ITERATIONS_CEILING" in over.json()["error"]["message"]
            reply = await api.post("/runs", json={**body, "max_iterations": 25})
            assert reply.status_code == 201, reply.text
            done = await wait_status(api, reply.json()["run_id"], "COMPLETED", seconds=90)
    assert done["iterations"] == 25 and done["truncated"] is True
