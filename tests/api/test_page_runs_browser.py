"""The runs list shows each run once, however its fetches return (CI: a run's row stood
twice in the list filtered to AWAITING_RECONCILIATION). Shown twice in a row (the filter
applied while the first showing's page was still on its way), each showing cleared the list
and then appended what its own fetch returned: both pages landed. Now a page fetched for
an earlier showing is dropped."""

import asyncio

from playwright.async_api import Page, Route, expect

from tests.api.browser import browser, page
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status
from tests.api.test_page_browser import DECIDER, sign_in

__all__ = ["browser", "page"]  # fixtures


async def test_a_list_shown_twice_at_once_shows_each_run_once(live: Live, page: Page) -> None:
    async with http(live, token(live, name("ivo"), *DECIDER, "runs:cancel")) as c:
        run_id = (await start(c, "helper", REFUND))["run_id"]
        await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
        await sign_in(page, live, token(live, name("uma"), *DECIDER, "runs:read-all"))
        first = asyncio.Event()
        release = asyncio.Event()

        async def held_first(route: Route) -> None:
            # The first list fetch answers only after the second showing's has landed.
            if not first.is_set():
                first.set()
                await release.wait()
            await route.continue_()

        await page.route("**/runs?*", held_first)
        await page.evaluate("location.hash = '#/runs?status=WAITING_FOR_APPROVAL'")
        await asyncio.wait_for(first.wait(), 30)
        await page.evaluate("window.dispatchEvent(new HashChangeEvent('hashchange'))")
        row = page.locator(f'#runs-body tr[data-run="{run_id}"]')
        await expect(row).to_have_count(1)  # the second showing's page
        release.set()
        # The first fetch answered too; its page belongs to a showing that is gone.
        await page.wait_for_load_state("networkidle")
        await expect(row).to_have_count(1)
        assert (await c.post(f"/runs/{run_id}/cancel", json={})).status_code == 202
