"""The approvals page in headless chromium (issue 27 item 5): a run whose write was
interrupted after its claim is listed under "Needs attention", and its run page shows the
write (tool, call id, idempotency key, arguments at the run's privacy level, fence state,
since when); a pending approval shows each call's effect class."""

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest
from playwright.async_api import Page, expect

from agentrt.contracts.ids import idempotency_key
from tests.api.browser import browser, page, shot
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status
from tests.api.test_pending_write_views import ALL, _interrupted
from tests.conftest import UnknownOutcome

__all__ = ["browser", "page"]  # fixtures
VIEWPORT = (1100, 900)
MakeLive = Callable[[Callable[[str], None]], AbstractAsyncContextManager[Live]]


@pytest.mark.timeout(180)
async def test_the_page_lists_an_interrupted_write_and_shows_it_and_each_calls_effect(
    make_live: MakeLive, page: Page
) -> None:
    async with make_live(UnknownOutcome()) as live:
        secret = token(live, name("dora"), *ALL)
        run_id, call = await _interrupted(live, secret)
        key = idempotency_key(run_id, call["call_id"])
        async with http(live, secret) as client:
            waiting_id = (await start(client, "helper", REFUND))["run_id"]
            await wait_status(client, waiting_id, "WAITING_FOR_APPROVAL")

            await page.goto(live.url + "/ui/")
            await page.fill("#token", secret)
            await page.click("#signin-form button")
            waiting = page.locator(f'#inbox-list .card[data-run="{waiting_id}"]')
            await expect(waiting.locator(".call .effect")).to_have_text("NON_IDEMPOTENT_WRITE")
            listed = page.locator(f'#attention-list .card[data-run="{run_id}"]')
            await expect(listed).to_contain_text("outcome_unknown")
            await expect(listed.locator(".write-idempotency-key")).to_have_text(key)
            await page.screenshot(path=shot("attention.png"), full_page=True)

            await listed.locator(f'a[href="#/runs/{run_id}"]').click()
            write = page.locator("#run-pending .card.write")
            await expect(write.locator("h3")).to_contain_text("outcome is unknown")
            await expect(write.locator(".write-tool")).to_have_text("issue_refund")
            await expect(write.locator(".write-call-id")).to_have_text(call["call_id"])
            await expect(write.locator(".write-idempotency-key")).to_have_text(key)
            await expect(write.locator(".write-fence")).to_have_text("outcome_unknown")
            await expect(write.locator(".write-since")).not_to_be_empty()
            await expect(write.locator("pre.arguments")).to_contain_text('"order_id": "1042"')
            await expect(page.locator(".fact-attention")).to_have_text("outcome_unknown")
            await expect(page.locator("#run-pending .failure-action")).to_contain_text(
                "idempotency key"
            )
            # The timeline holds the whole run, to its failure.
            await expect(page.locator("#live")).to_have_text("(run ended)")
            await expect(page.locator('#events li[data-kind="run_failed"] .code')).to_contain_text(
                "FAILED (interrupted_write) · OutcomeUnknown"
            )
            await page.screenshot(path=shot("interrupted-write.png"), full_page=True)

            # The runs list, filtered to what needs attention: this run, not the waiting one.
            await page.goto(live.url + "/ui/#/runs?attention=1")
            await expect(page.locator("#f-attention")).to_be_checked()
            rows = page.locator("#runs-body tr")
            await expect(rows).to_have_count(1)
            assert await rows.first.get_attribute("data-run") == run_id
            await expect(rows.first.locator(".why")).to_contain_text("write was interrupted")
            await client.post(f"/runs/{waiting_id}/cancel", json={})
