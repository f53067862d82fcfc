"""`GET /attention` (issue 27 item 5) keeps the operator API's checks: no token or a bad one
is 401, a token without runs:read is 403, a limit out of bounds is a typed refusal, and a
principal without runs:read-all sees only the runs it started."""

from tests.api.conftest import Live
from tests.api.ops_helpers import error_type, http, name, token


async def test_attention_needs_a_token_with_runs_read(live: Live) -> None:
    for secret in (None, "agrt_nope_nope", "alice-key-4f1c2a9d"):
        async with http(live, secret) as c:
            reply = await c.get("/attention")
            assert reply.status_code == 401 and error_type(reply) == "unauthorized"
    async with http(live, token(live, name("starter"), "runs:start")) as c:
        reply = await c.get("/attention")
        assert reply.status_code == 403 and error_type(reply) == "forbidden"
    async with http(live, token(live, name("reader"), "runs:read")) as c:
        assert (await c.get("/attention")).json() == []  # it started no run
        for limit in ("0", "201", "x"):
            reply = await c.get("/attention", params={"limit": limit})
            assert reply.status_code in (400, 422), reply.text
            assert "error" in reply.json() and "Traceback" not in reply.text
