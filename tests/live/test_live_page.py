"""The approvals page shows a run's answer as it is written: the live text in headless
chromium while the model call is held, replaced by the committed turn once it is stored."""

from playwright.async_api import Page, expect

from bench.streaming_server import GATE
from tests.api.browser import browser, page
from tests.api.ops_helpers import http, name, start, token
from tests.live.conftest import Serve

__all__ = ["browser", "page"]  # fixtures


async def test_the_page_shows_the_answer_as_it_is_written(
    serve_streaming: Serve, page: Page
) -> None:
    script = ["Hello ", "from ", GATE, "the ", "stream.", 0.3]
    async with serve_streaming(script) as (live, server):
        secret = token(live, name("dana"), "runs:start", "runs:read")
        async with http(live, secret) as c:
            run_id = (await start(c, "streamer", "Say hello"))["run_id"]
        await page.goto(live.url + "/ui/")
        await page.fill("#token", secret)
        await page.click("#signin-form button")
        await expect(page.locator("#inbox h1")).to_be_visible()
        await page.goto(f"{live.url}/ui/#/runs/{run_id}")
        writing = page.locator("#events li.writing .live-text")
        await expect(writing).to_have_text("Hello from ")
        assert not server.gate.is_set()  # shown while the call is running
        server.gate.set()
        await expect(page.locator('#events li[data-kind="llm"]')).to_contain_text(
            "Hello from the stream."
        )
        await expect(page.locator("#events li.writing")).to_have_count(0)
        await expect(page.locator(".fact-status")).to_have_text("COMPLETED")
