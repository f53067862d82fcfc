"""The approvals page in headless chromium, against a live API, worker and Temporal dev
server on 127.0.0.1: sign in with a token, approve and deny from the page (the write runs
once), a stale page's decision gets a clear refusal, and a principal without runs:decide
sees no buttons and is refused by the API."""

from playwright.async_api import Page, expect

from agentrt.store.demo import DemoWorld
from tests.api.browser import browser, page
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status

__all__ = ["browser", "page"]  # fixtures
DECIDER = ("runs:start", "runs:read", "runs:decide")


async def sign_in(page: Page, live: Live, secret: str) -> None:
    await page.goto(live.url + "/ui/")
    await page.fill("#token", secret)
    await page.click("#signin-form button")
    await expect(page.locator("#inbox h1")).to_be_visible()


async def test_approve_and_deny_from_the_page_the_write_runs_once(live: Live, page: Page) -> None:
    who = name("carol")
    secret = token(live, who, *DECIDER)
    async with http(live, secret) as c:
        # One after the other: the inbox orders by when a run began to wait, and two runs
        # started together may reach their waits in either order.
        approve_id = (await start(c, "helper", REFUND))["run_id"]
        await wait_status(c, approve_id, "WAITING_FOR_APPROVAL")
        deny_id = (await start(c, "helper", REFUND))["run_id"]
        await wait_status(c, deny_id, "WAITING_FOR_APPROVAL")
        await sign_in(page, live, secret)
        await expect(page.locator("#who")).to_contain_text(who)
        cards = page.locator("#inbox-list .card")
        await expect(cards).to_have_count(2)
        # Oldest first, with the call's arguments (helper keeps full privacy).
        assert await cards.nth(0).get_attribute("data-run") == approve_id
        await expect(cards.nth(0).locator(".call strong")).to_have_text("issue_refund")
        await expect(cards.nth(0).locator("pre.arguments")).to_contain_text('"order_id": "1042"')

        # Deny the newer one from the inbox, with a reason.
        second = page.locator(f'.card[data-run="{deny_id}"]')
        await second.locator("input.reason").fill("amount needs a second look")
        await second.locator("button.deny").click()
        await expect(page.locator("#notice")).to_contain_text(f"Denied as {who}")

        # Approve the older one from its run page; its events arrive live.
        await page.click(f'a[href="#/runs/{approve_id}"]')
        await expect(page.locator('#events li[data-kind="approval_requested"]')).to_have_count(1)
        await expect(page.locator("#live")).to_have_text("● live")
        await page.locator("#run-pending button.approve").click()
        await expect(page.locator("#notice")).to_contain_text(f"Approved as {who}")
        await expect(page.locator('#events li[data-kind="approval"]')).to_contain_text(who)
        await expect(page.locator(".fact-status")).to_have_text("COMPLETED")
        await expect(page.locator("#live")).to_have_text("(run ended)")
        await expect(page.locator("#run-pending button")).to_have_count(0)

        await wait_status(c, deny_id, "COMPLETED")
        events = (await c.get(f"/runs/{deny_id}/events")).json()["events"]
    audit = next(e["payload"] for e in events if e["kind"] == "approval")
    assert audit["approved"] is False and audit["decided_by"] == who
    world = DemoWorld(live.parts.ctx)
    assert world.ledger_count(run_id=approve_id) == 1  # approved from the page: once
    assert world.ledger_count(run_id=deny_id) == 0


async def test_a_stale_page_gets_a_clear_message_and_changes_nothing(
    live: Live, page: Page
) -> None:
    who = name("dan")
    secret = token(live, who, *DECIDER)
    async with http(live, secret) as c:
        run_id = (await start(c, "helper", REFUND))["run_id"]
        waiting = await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
        await sign_in(page, live, secret)
        card = page.locator(f'.card[data-run="{run_id}"]')
        await expect(card.locator("button.approve")).to_be_visible()
        # Someone else decides meanwhile (here: the same principal from another client).
        digest = waiting["pending_approval"]["turn_digest"]
        first = await c.post(
            f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": digest}
        )
        assert first.status_code == 200, first.text
        await card.locator("button.approve").click()
        await expect(page.locator("#notice")).to_contain_text("This turn was already decided")
        await expect(card.locator("button.approve")).to_be_enabled()
        await wait_status(c, run_id, "COMPLETED")
        events = (await c.get(f"/runs/{run_id}/events")).json()["events"]
    assert [e["kind"] for e in events].count("approval") == 1
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1


async def test_without_runs_decide_no_buttons_and_the_api_refuses(live: Live, page: Page) -> None:
    owner, reader = name("erin"), name("frank")
    async with http(live, token(live, owner, *DECIDER, "runs:cancel")) as c:
        run_id = (await start(c, "helper", REFUND))["run_id"]
        await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
        viewer = token(live, reader, "runs:read", "runs:read-all")
        await sign_in(page, live, viewer)
        card = page.locator(f'.card[data-run="{run_id}"]')
        await expect(card.locator(".call strong")).to_have_text("issue_refund")
        await expect(card).to_contain_text("not decide it (no runs:decide scope)")
        await expect(page.locator("button.approve, button.deny")).to_have_count(0)
        await page.click(f'a[href="#/runs/{run_id}"]')
        await expect(page.locator('#events li[data-kind="approval_requested"]')).to_have_count(1)
        await expect(page.locator("#run-pending button")).to_have_count(0)
        digest = (await c.get(f"/runs/{run_id}")).json()["pending_approval"]["turn_digest"]
        # The page hid the buttons; the API refuses the same request from this page anyway.
        refused = await page.evaluate(
            """async ([runId, digest]) => {
                const r = await fetch(`/runs/${runId}/decision`, {method: "POST",
                  headers: {"Authorization": `Bearer ${sessionStorage.getItem("agentrt.token")}`,
                            "Content-Type": "application/json"},
                  body: JSON.stringify({verdict: "approve", turn_digest: digest})});
                return [r.status, (await r.json()).error.type];
            }""",
            [run_id, digest],
        )
        assert refused == [403, "forbidden"]
        assert (await c.get(f"/runs/{run_id}")).json()["status"] == "WAITING_FOR_APPROVAL"
        assert (await c.post(f"/runs/{run_id}/cancel")).status_code == 202
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 0
