"""The approvals page's answer form in headless chromium (issue 27 item 4): a run waiting
for an answer on its interrupted refund is listed under "Needs attention" with the form;
an operator without runs:reconcile sees no form; one with it records "not applied, retry",
and the refund runs again, once."""

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
