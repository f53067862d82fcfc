"""The approvals page's answer form in headless chromium (issue 27 item 4): a run waiting
for an answer on its interrupted refund is listed under "Needs attention" with the form;
an operator without runs:reconcile sees no form; one with it records "not applied, retry",
and the refund runs again, once. A run that failed with the outcome unknown gets the
resolution form instead (issue 40 item 3), and leaves the list once resolved."""

import pytest
from playwright.async_api import Page, expect

from agentrt.store.demo import DemoWorld
from tests.api._reconcile import MakeLive, awaiting
from tests.api.browser import browser, page, shot
from tests.api.ops_helpers import name, token, wait_status

__all__ = ["browser", "page"]  # fixtures


async def sign_in(page: Page, url: str, secret: str) -> None:
    await page.goto(url + "/ui/")
    await page.evaluate("sessionStorage.clear()")
    await page.goto(url + "/ui/")
    await page.fill("#token", secret)
    await page.click("#signin-form button")


@pytest.mark.timeout(180)
async def test_the_page_answers_for_a_waiting_write(make_live: MakeLive, page: Page) -> None:
    async with awaiting(make_live) as (live, client, run_id, run):
        reader = token(live, name("reader"), "runs:read-all")
        await sign_in(page, live.url, reader)
        listed = page.locator(f'#attention-list .card[data-run="{run_id}"]')
        await expect(listed).to_contain_text("awaiting_reconciliation")
        await expect(listed.locator("form.reconcile")).to_contain_text("no runs:reconcile")
        await expect(listed.locator(".reconcile-send")).to_have_count(0)

        ops = token(live, name("oncall"), "runs:read-all", "runs:reconcile")
        await page.click("#signout")
        await sign_in(page, live.url, ops)
        form = page.locator(f'#attention-list .card[data-run="{run_id}"] form.reconcile')
        await expect(form).to_have_attribute("data-fence", run["pending_write"]["fence"])
        await form.locator(".reconcile-answer").select_option("not_applied:retry")
        await form.locator(".reconcile-reason").fill("no row on the ledger")
        await page.screenshot(path=shot("reconcile-form.png"), full_page=True)
        await form.locator(".reconcile-send").click()
        await expect(form.locator(".reconcile-status")).to_contain_text("Answered not applied")
        await expect(form).to_have_attribute("data-answered", "not_applied")
        done = await wait_status(client, run_id, "COMPLETED", seconds=30)
        events = await live.runtime.events(run_id)
    assert done["pending_write"] is None
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1
    audit = next(e for e in events if e.kind == "reconciled")
    assert audit.payload["answered_by"].startswith("oncall-")
    assert audit.payload["reason"] == "no row on the ledger"


NOTE = "Ledger checked for the key: no refund row (ticket OPS-31)."


@pytest.mark.timeout(180)
async def test_the_page_resolves_a_failed_unknown_write_and_it_leaves_attention(
    make_live: MakeLive, page: Page
) -> None:
    """Issue 40 item 3 on the page: a run that FAILED with its write's outcome unknown has
    a resolution form under "Needs attention" for a principal with runs:resolve (none
    without it); recording what the target showed, with a note, takes it off the list."""
    async with awaiting(make_live, "asker-brief") as (live, client, run_id, _):
        run = await wait_status(client, run_id, "FAILED", seconds=30)  # nobody answered
        assert run["attention"] == "outcome_unknown"
        await sign_in(page, live.url, token(live, name("reader"), "runs:read-all"))
        listed = page.locator(f'#attention-list .card[data-run="{run_id}"]')
        await expect(listed.locator(".resolve-denied")).to_contain_text("runs:resolve")
        await expect(listed.locator("form.resolve")).to_have_count(0)

        ops = name("oncall")
        await page.click("#signout")
        await sign_in(page, live.url, token(live, ops, "runs:read-all", "runs:resolve"))
        form = listed.locator("form.resolve")
        await expect(form).to_have_attribute("data-fence", run["pending_write"]["fence"])
        await form.locator(".resolve-send").click()  # no note: refused on the page
        await expect(form.locator(".resolve-status")).to_contain_text("Say what you checked")
        await form.locator(".resolve-outcome").select_option("not_applied")
        await form.locator(".resolve-note").fill(NOTE)
        await page.screenshot(path=shot("resolve-form.png"), full_page=True)
        await form.locator(".resolve-send").click()
        await expect(listed).to_have_count(0)  # the list was read again: it left
        await expect(page.locator("#notice")).to_contain_text(f"Resolved as not applied by {ops}")
        after = await wait_status(client, run_id, "FAILED")
        events = await live.runtime.events(run_id)
    assert after["attention"] is None and after["pending_write"] is None
    [resolved] = [e for e in events if e.kind == "write_resolved"]
    assert resolved.payload["resolved_by"] == ops and resolved.payload["note"] == NOTE
    assert resolved.payload["outcome"] == "not_applied"
