"""Run data on the approvals page is text, never markup (issue 29 item 4): a prompt carrying
an <img onerror> tag shows as those characters on the inbox card and the run's timeline, in
headless chromium, and no element is made of it. (The strict CSP would also refuse the
inline handler; this proves the page never parses run data as HTML in the first place.)"""

from playwright.async_api import Page, expect

from tests.api.browser import browser, page
from tests.api.conftest import Live
from tests.api.ops_helpers import http, name, token
from tests.api.test_page_browser import DECIDER
from tests.api.test_page_timeline_browser import waiting_card

__all__ = ["browser", "page"]  # fixtures
HOSTILE = 'Please explain the refund <img src=x onerror="window.__pwned=1"> for order 1042'


async def test_a_hostile_prompt_renders_as_text(live: Live, page: Page) -> None:
    async with http(live, token(live, name("wes"), *DECIDER, "runs:cancel")) as c:
        run_id, card = await waiting_card(live, page, c, "helper", HOSTILE)
        await expect(card.locator(".context .prompt")).to_have_text(HOSTILE)
        await card.locator("a").click()
        prompt = page.locator('#events li[data-kind="run_started"] .prompt')
        await expect(prompt).to_have_text(HOSTILE)
        assert (await c.post(f"/runs/{run_id}/cancel", json={})).status_code == 202
        await expect(page.locator(".fact-status")).to_have_text("CANCELLED")
    assert await page.locator("main img").count() == 0  # no element was made of the text
    assert await page.evaluate("window.__pwned") is None
    assert "&lt;img" not in await prompt.inner_text()  # shown as typed, not escaped twice
