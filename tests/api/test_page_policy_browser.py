"""An approval policy's decisions on the page's timeline (issue 44, item 3), in headless
chromium against a live API and a worker serving a policy: a large refund shows the
policy's ask for two people, the first person's partial approval and the second's; a
small refund shows the policy as its approver."""

from pathlib import Path

from playwright.async_api import Page, expect
from temporalio.client import Client

from agentrt import Settings
from agentrt.contracts.enums import RunStatus
from tests.api.browser import browser, page
from tests.api.conftest import Live
from tests.api.ops_helpers import name, token
from tests.api.test_page_browser import DECIDER, sign_in
from tests.workflows._policy import refunder, serving
from tests.workflows._waiting import pending_digest, until_status

__all__ = ["browser", "page"]  # fixtures


async def test_the_timeline_names_the_policy_and_each_person(
    live: Live, page: Page, client: Client, settings: Settings, tmp_path: Path
) -> None:
    async with serving(client, settings, tmp_path, [refunder("pol-page")]) as s:
        large = await s.refund("pol-page", "large", RunStatus.WAITING_FOR_APPROVAL)
        digest = pending_digest(large)
        for person in ("bob", "carol"):
            await s.runtime.approve(
                large.run_id, approved=True, decided_by=person, turn_digest=digest
            )
        await until_status(s.runtime, large.run_id, RunStatus.COMPLETED)
        small = await s.refund("pol-page", "small", RunStatus.COMPLETED)

    await sign_in(page, live, token(live, name("ida"), *DECIDER, "runs:read-all"))
    await page.goto(f"{live.url}/ui/#/runs/{large.run_id}")
    events = page.locator("#events")
    await expect(events.locator('li[data-kind="policy_decision"] .verdict')).to_have_text(
        "policy refunds@3 asks 2 distinct people to approve"
    )
    verdicts = events.locator('li[data-kind="approval"] .verdict')
    await expect(verdicts.nth(0)).to_contain_text("Approved by bob (one of the people")
    await expect(verdicts.nth(1)).to_have_text("Approved by carol")

    await page.goto(f"{live.url}/ui/#/runs/{small.run_id}")
    await expect(events.locator('li[data-kind="approval"] .verdict')).to_have_text(
        "Approved by policy refunds@3"
    )
