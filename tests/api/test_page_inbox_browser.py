"""The inbox is drawn whatever one run in it holds (CI: the timeline and reconcile page
tests waited 30 s for a card that never came). A run waiting for approval with no pending
turn recorded (left committed in the suite's shared database by a store test) came first
in every inbox on SQLite; drawing its card threw a TypeError, and neither the inbox's other
cards nor the attention list after it were ever drawn. Now that run gets a card saying so
and the rest of the page is drawn."""

from playwright.async_api import Page, expect

from agentrt.contracts.enums import RunStatus
from agentrt.store.a2a.purge import purge_runs
from tests._runs import begin_run
from tests._snapshots import recorded
from tests.api.browser import browser, page
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status
from tests.api.test_page_browser import DECIDER, sign_in

__all__ = ["browser", "page"]  # fixtures
SNAPSHOT = recorded("full")


def _waiting_without_a_turn(live: Live) -> str:
    """A row WAITING_FOR_APPROVAL with no pending approval and no waiting_since."""
    return begin_run(live.parts.ctx, snapshot=SNAPSHOT, initiator="odd",
                     status=RunStatus.WAITING_FOR_APPROVAL)  # fmt: skip


async def test_a_run_the_page_cannot_draw_costs_its_own_card_not_the_inbox(
    live: Live, page: Page
) -> None:
    odd = _waiting_without_a_turn(live)
    try:
        async with http(live, token(live, name("rae"), *DECIDER, "runs:cancel")) as c:
            run_id = (await start(c, "helper", REFUND))["run_id"]
            await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
            await sign_in(page, live, token(live, name("sol"), *DECIDER, "runs:read-all"))
            card = page.locator(f'#inbox-list .card[data-run="{run_id}"]')
            await expect(card.locator(".call strong")).to_have_text("issue_refund")
            await expect(card.locator("button.approve")).to_be_visible()
            unshown = page.locator(f'#inbox-list .card[data-run="{odd}"]')
            await expect(unshown).to_contain_text("no pending turn is recorded")
            await expect(unshown.locator("button")).to_have_count(0)
            # The attention list after the inbox was drawn too (empty or not).
            listed = page.locator("#attention-list .card, #attention-empty:visible")
            await expect(listed.first).to_be_visible()
            assert (await c.post(f"/runs/{run_id}/cancel", json={})).status_code == 202
    finally:
        purge_runs(live.parts.ctx, [odd])
