"""GET /me and the page's static files over real HTTP."""

from agentrt.api.operator.page import STATIC
from tests.api.conftest import Live
from tests.api.ops_helpers import error_type, http, name, token


async def test_me_names_the_principal_and_what_it_may_do(live: Live) -> None:
    who = name("admin")
    async with http(live, token(live, who, "admin")) as c:
        me = (await c.get("/me")).json()
    assert me["principal"] == who and me["scopes"] == ["admin"]
    assert set(me["may"]) >= {"runs:decide", "runs:read-all", "runs:cancel", "runs:start"}
    reader = name("reader")
    async with http(live, token(live, reader, "runs:read-all")) as c:
        me = (await c.get("/me")).json()
    assert me["may"] == ["runs:read", "runs:read-all"]  # read-all implies read, not decide
    async with http(live, None) as anonymous:
        refused = await anonymous.get("/me")
    assert refused.status_code == 401 and error_type(refused) == "unauthorized"
    async with http(live, "agrt_nope_x") as forged:
        assert (await forged.get("/me")).status_code == 401


async def test_the_page_is_served_with_a_strict_policy(live: Live) -> None:
    async with http(live, None) as c:
        moved = await c.get("/ui")
        assert moved.status_code == 307 and moved.headers["location"] == "/ui/"
        page = await c.get("/ui/")
        script = await c.get("/ui/page.js")
        modules = [await c.get(f"/ui/{m.name}") for m in sorted(STATIC.glob("*.js"))]
        missing = await c.get("/ui/nope.js")
    assert page.status_code == 200 and "agentrt approvals" in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert script.status_code == 200 and ".innerHTML" not in script.text  # text only
    # The page's ES modules: each served by the API as JavaScript (nosniff refuses a module
    # of another type), none writing markup, none loading anything from elsewhere.
    assert len(modules) >= 5 and 'type="module" src="/ui/page.js"' in page.text
    for module in modules:
        assert module.status_code == 200, module.url
        assert "javascript" in module.headers["content-type"], module.url
        assert ".innerHTML" not in module.text and "insertAdjacentHTML" not in module.text
        assert "http://" not in module.text and "https://" not in module.text, module.url
    assert missing.status_code == 404
