"""Issue 40 item 1 on the page, in headless chromium against the live API: a run's timeline,
open while sequence 2 commits before sequence 1 (a parallel call, a reconciled write's
`tool` event), shows the late event without a reload, in its place in the timeline."""

import asyncio

from playwright.async_api import Page, expect

from tests._late_events import begin, settle, tool_step
from tests.api.browser import browser, page, shot
from tests.api.conftest import Live
from tests.api.ops_helpers import name, token
from tests.api.test_page_browser import sign_in

__all__ = ["browser", "page"]  # fixtures


async def test_the_timeline_shows_a_late_event_without_a_reload(live: Live, page: Page) -> None:
    who, ctx = name("pia"), live.parts.ctx
    run_id = begin(ctx, who)
    await sign_in(page, live, token(live, who, "runs:read"))
    await page.goto(f"{live.url}/ui/#/runs/{run_id}")
    events = page.locator("#events li[data-sequence]")
    await expect(events).to_have_count(1)
    await expect(page.locator("#live")).to_have_text("● live")
    await asyncio.to_thread(tool_step, ctx, run_id, 2)
    await expect(events).to_have_count(2)  # the page has followed past sequence 2
    await asyncio.to_thread(tool_step, ctx, run_id, 1)  # the lower sequence, committed late
    await asyncio.to_thread(settle, ctx, run_id, 3)
    await expect(page.locator("#live")).to_have_text("(run ended)")
    await expect(events).to_have_count(4)
    shown = [await events.nth(i).get_attribute("data-sequence") for i in range(4)]
    assert shown == ["0", "1", "2", "3"]  # the late one in its place, none twice
    await expect(page.locator('#events li[data-sequence="1"][data-kind="tool"]')).to_be_visible()
    await page.screenshot(path=shot("run-late-event.png"), full_page=True)
