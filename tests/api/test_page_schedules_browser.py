"""The page's schedules (issue 44), in headless chromium against a live server: a
principal with schedules:manage sees its schedule of runs, triggers it (one run, linked
from the row), pauses and resumes it; one with schedules:read only sees no buttons, and
one without either scope no Schedules link."""

from playwright.async_api import Page, expect

from tests.api.browser import browser, page, shot
from tests.api.conftest import Live
from tests.api.ops_helpers import http, name, token, wait_status
from tests.api.test_page_browser import sign_in
from tests.api.test_schedules import MANAGER, body, listed
from tests.starter._schedules import schedule_name

__all__ = ["browser", "page"]  # fixtures


async def test_trigger_pause_and_resume_from_the_page(live: Live, page: Page) -> None:
    schedule = schedule_name("page")
    secret = token(live, name("pia"), *MANAGER)
    async with http(live, secret) as api:
        assert (await api.post("/schedules", json=body(schedule, paused=True))).status_code == 201
        try:
            await listed(api, schedule)
            await sign_in(page, live, secret)
            await page.click("#nav-schedules")
            row = page.locator(f'#schedules-body tr[data-schedule="{schedule}"]')
            await expect(row).to_have_attribute("data-paused", "true")
            await expect(row).to_contain_text("every 1h")
            await row.locator("button.trigger").click()
            await expect(page.locator("#notice")).to_contain_text("fired once")
            link = row.locator("td a").first  # the fire's run, once the list shows it
            while not await link.count():
                await page.click("#schedules-refresh")
                await expect(row).to_be_visible()
            run_id = await link.get_attribute("title")
            assert run_id is not None
            await wait_status(api, run_id, "COMPLETED", seconds=60)
            await row.locator("button.resume").click()
            await expect(row).to_have_attribute("data-paused", "false")
            await page.screenshot(path=shot("schedules.png"))
            await row.locator("button.pause").click()
            await expect(row).to_have_attribute("data-paused", "true")
            await link.click()
            await expect(page.locator("#run-id")).to_have_text(run_id)
        finally:
            await api.delete(f"/schedules/{schedule}")


async def test_a_reader_sees_no_buttons_and_others_no_link(live: Live, page: Page) -> None:
    schedule = schedule_name("seen")
    async with http(live, token(live, name("own"), *MANAGER)) as api:
        assert (await api.post("/schedules", json=body(schedule, paused=True))).status_code == 201
        try:
            await listed(api, schedule)
            await sign_in(page, live, token(live, name("rae"), "schedules:read", "runs:read"))
            await page.click("#nav-schedules")
            row = page.locator(f'#schedules-body tr[data-schedule="{schedule}"]')
            await expect(row).to_contain_text("paused")
            await expect(row.locator("button")).to_have_count(0)
            await page.click("#signout")
            await sign_in(page, live, token(live, name("sam"), "runs:read"))
            await expect(page.locator("#nav-schedules")).to_be_hidden()
        finally:
            await api.delete(f"/schedules/{schedule}")
