"""The page an operator reads (issue 29 item 4), in headless chromium against a live API,
worker and Temporal dev server: an inbox card shows the prompt, the model's text before the
calls and each call's effect; a run page is a timeline (prompt, model text, the tool call
with its effect badge and folded arguments and result, who approved, the answer with its
spend); a failed run says why in words and what to do; times carry their zone; the runs
list filters by status, profile and needs attention, failed runs included; at privacy level
metadata no text is shown."""

import re

import httpx
from playwright.async_api import Locator, Page, expect

from tests.api.browser import browser, page, shot
from tests.api.conftest import Live
from tests.api.ops_helpers import LOOKUP, http, name, start, token, wait_status
from tests.api.test_ops_run_filters import EXPLAINED, OUTAGE, SAID, three_runs
from tests.api.test_page_browser import DECIDER, sign_in

__all__ = ["browser", "page"]  # fixtures
VIEWPORT = (1100, 1000)
UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")


async def test_the_inbox_card_and_the_run_timeline(live: Live, page: Page) -> None:
    owner, decider = name("rita"), name("sam")
    async with http(live, token(live, owner, *DECIDER)) as c:
        run_id = (await start(c, "helper", EXPLAINED))["run_id"]
        await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
    await sign_in(page, live, token(live, decider, *DECIDER, "runs:read-all"))
    card = page.locator(f'#inbox-list .card[data-run="{run_id}"]')
    await expect(card.locator(".context .prompt")).to_have_text(EXPLAINED)
    await expect(card.locator(".context .said")).to_have_text(SAID)
    await expect(card.locator(".call strong")).to_have_text("issue_refund")
    await expect(card.locator(".call .badge.effect")).to_have_text("NON_IDEMPOTENT_WRITE")
    assert UTC.match(await card.locator("time").first.inner_text())
    await page.screenshot(path=shot("inbox.png"), full_page=True)

    await card.locator(f'a[href="#/runs/{run_id}"]').click()
    await page.locator("#run-pending button.approve").click()
    await expect(page.locator(".fact-status")).to_have_text("COMPLETED")
    await expect(page.locator("#live")).to_have_text("(run ended)")
    events = page.locator("#events")
    await expect(events.locator('li[data-kind="run_started"] .prompt')).to_have_text(EXPLAINED)
    await expect(events.locator('li[data-kind="llm"] .said').first).to_have_text(SAID)
    await expect(events.locator('li[data-kind="llm"] .asks').first).to_have_text(
        "asks to call: issue_refund"
    )
    tool = events.locator('li[data-kind="tool"]')
    await expect(tool.locator(".badge.effect")).to_have_text("NON_IDEMPOTENT_WRITE")
    args = tool.locator("details.arguments")
    assert await args.get_attribute("open") is None  # folded until asked
    await args.locator("summary").click()
    await expect(args.locator("pre")).to_contain_text('"order_id": "1042"')
    await expect(args.locator("pre")).to_contain_text('\n  "amount_cents": 4999')  # indented
    await tool.locator("details.result summary").click()
    await expect(tool.locator("details.result pre")).to_be_visible()
    await expect(events.locator('li[data-kind="approval"] .verdict')).to_have_text(
        f"Approved by {decider}"
    )
    done = events.locator('li[data-kind="run_completed"]')
    await expect(done.locator(".answer")).to_have_text("Done: order 1042 was refunded in full.")
    await expect(done.locator(".spend")).to_contain_text("completion tokens")
    await expect(page.locator(".fact-tokens")).to_contain_text("completion")
    await expect(page.locator(".fact-cost")).not_to_be_empty()
    for when in (".fact-started", ".fact-finished"):
        assert UTC.match(await page.locator(when).inner_text()), when
    await page.screenshot(path=shot("run.png"), full_page=True)


async def test_a_failed_run_says_why_and_what_to_do(live: Live, page: Page) -> None:
    secret = token(live, name("tess"), *DECIDER)
    async with http(live, secret) as c:
        run_id = (await start(c, "helper", OUTAGE))["run_id"]
        await wait_status(c, run_id, "FAILED", seconds=60)
    await sign_in(page, live, secret)
    await page.goto(f"{live.url}/ui/#/runs/{run_id}")
    failure = page.locator("#run-pending .card.failure")
    await expect(failure.locator(".failure-summary")).to_contain_text(
        "The model provider failed on every attempt"
    )
    await expect(failure.locator(".failure-action")).to_contain_text(
        "What to do: Check the provider's status"
    )
    await expect(failure.locator(".failure-code")).to_contain_text("provider_failed")
    failed = page.locator('#events li[data-kind="run_failed"]')
    await expect(failed.locator(".code")).to_have_text(
        "FAILED (provider_failed) · ScriptedProviderError"
    )
    await page.screenshot(path=shot("run-failed.png"), full_page=True)


async def test_the_runs_list_filters_failed_runs_included(live: Live, page: Page) -> None:
    secret = token(live, name("uma"), *DECIDER, "runs:cancel")
    async with http(live, secret) as c:
        done, failed, waiting = await three_runs(c)
        await sign_in(page, live, secret)
        await page.click('#nav a[href="#/runs"]')
        rows = page.locator("#runs-body tr")
        await expect(rows).to_have_count(3)
        assert [await rows.nth(i).get_attribute("data-run") for i in range(3)] == [
            waiting, failed, done,
        ]  # fmt: skip
        await expect(page.locator(f'tr[data-run="{failed}"] .why')).to_contain_text(
            "provider failed"
        )
        await page.select_option("#f-status", "FAILED")
        await page.click("#runs-filter button")
        await expect(rows).to_have_count(1)
        assert await rows.first.get_attribute("data-run") == failed
        assert "status=FAILED" in page.url  # a filtered list is a link
        await page.screenshot(path=shot("runs.png"), full_page=True)
        await page.select_option("#f-status", "")
        await page.fill("#f-profile", "redactor")
        await page.click("#runs-filter button")
        await expect(page.locator("#runs-empty")).to_be_visible()
        await expect(rows).to_have_count(0)
        await page.fill("#f-profile", "helper")
        await page.check("#f-attention")
        await page.click("#runs-filter button")
        await expect(page.locator("#runs-empty")).to_be_visible()  # no write left unknown
        await page.uncheck("#f-attention")
        await page.click("#runs-filter button")
        await expect(rows).to_have_count(3)
        await rows.nth(1).locator("a").click()
        await expect(page.locator("#run-pending .card.failure")).to_be_visible()
        assert (await c.post(f"/runs/{waiting}/cancel", json={})).status_code == 202


async def waiting_card(
    live: Live, page: Page, c: httpx.AsyncClient, profile: str, prompt: str
) -> tuple[str, Locator]:
    """Start a run that waits for approval, sign in as the client's principal: (the run,
    its inbox card)."""
    run_id = (await start(c, profile, prompt))["run_id"]
    await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
    await sign_in(page, live, c.headers["Authorization"].removeprefix("Bearer "))
    return run_id, page.locator(f'#inbox-list .card[data-run="{run_id}"]')


async def test_at_metadata_the_page_shows_no_text(live: Live, page: Page) -> None:
    async with http(live, token(live, name("vic"), *DECIDER, "runs:cancel")) as c:
        run_id, card = await waiting_card(live, page, c, "guarded", EXPLAINED)
        await expect(card.locator(".context .prompt")).to_have_text(
            "the prompt withheld at privacy level metadata"
        )
        await expect(card.locator(".call .badge.effect")).to_have_text("NON_IDEMPOTENT_WRITE")
        await card.locator("a").click()
        started = page.locator('#events li[data-kind="run_started"]')
        await expect(started.locator(".prompt")).to_contain_text("withheld at privacy level")
        await expect(page.locator('#events li[data-kind="llm"] .said')).to_contain_text(
            "withheld at privacy level metadata"
        )
        assert (await c.post(f"/runs/{run_id}/cancel", json={})).status_code == 202
        await expect(page.locator(".fact-status")).to_have_text("CANCELLED")
    body = await page.locator("main").inner_text()
    assert EXPLAINED not in body and SAID not in body and "1042" not in body
    assert LOOKUP not in body
