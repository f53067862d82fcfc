"""The page and the API agree (issue 40 item 6), in headless chromium against a live API,
worker and Temporal dev server:

- the runs list's status filter offers every status the API has, STARTING (an accepted
  start no worker began, read from Temporal) and AWAITING_RECONCILIATION included, and
  each lists its runs;
- a run awaiting an answer on its write shows its real rounds and tokens, and its reconcile
  events read as words (what was interrupted; who answered what, and why), not raw JSON;
- a run waiting for approval shows its real rounds, tokens and cost (a priced model) on the
  page and in GET /runs/{id}; a denial's reason shows on the decision in the timeline."""

import uuid
from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect
from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from agentrt.contracts.enums import RunStatus
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests.api._reconcile import MakeLive, answer_of, answered, awaiting
from tests.api.browser import browser, page, shot
from tests.api.conftest import serving
from tests.api.ops_helpers import LOOKUP, REFUND, http, lonely_api, name, start, token, wait_status
from tests.api.test_page_browser import DECIDER, sign_in

__all__ = ["browser", "page"]  # fixtures
VIEWPORT = (1100, 1000)
PRICES = "providers:\n  - name: scripted\n    prices: {default: {input: 1, output: 2}}\n"


async def _filter(page: Page, status: str) -> None:
    await page.click('#nav a[href="#/runs"]')
    await page.select_option("#f-status", status)
    await page.click("#runs-filter button")


async def test_the_status_filter_offers_every_status_and_lists_a_starting_run(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources, page: Page
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        secret = token(live, name("stan"), *DECIDER)
        async with http(live, secret) as api:
            body = {"profile": "helper", "prompt": LOOKUP, "run_id": str(uuid.uuid4())}
            accepted = await api.post("/runs", json=body, headers={"Prefer": "respond-async"})
            assert accepted.status_code == 202, accepted.text
            await sign_in(page, live, secret)
            await page.click('#nav a[href="#/runs"]')
            offered = await page.locator("#f-status option").evaluate_all(
                "options => options.map((o) => o.value)"
            )
            assert offered == ["", *(s.value for s in RunStatus)]
            await _filter(page, "STARTING")
            row = page.locator(f'#runs-body tr[data-run="{body["run_id"]}"]')
            await expect(row).to_have_attribute("data-status", "STARTING")
            assert "status=STARTING" in page.url
            await page.screenshot(path=shot("runs-starting.png"), full_page=True)
            # A worker begins it: no longer STARTING.
            served = live.settings.replace(temporal={"task_queue": lonely})
            async with make_worker(client, live.parts, served):
                await wait_status(api, body["run_id"], "COMPLETED")
            await _filter(page, "COMPLETED")
            await expect(
                page.locator(f'#runs-body tr[data-run="{body["run_id"]}"]')
            ).to_have_attribute("data-status", "COMPLETED")


async def test_a_run_awaiting_an_answer_filters_shows_its_spend_and_reads_as_words(
    make_live: MakeLive, page: Page
) -> None:
    async with awaiting(make_live) as (live, client, run_id, run):
        # Its progress so far, not 0/0 (the wait records it).
        assert run["iterations"] == 1 and run["prompt_tokens"] > 0, run
        call = run["pending_write"]["call_id"]
        reader = token(live, name("rhea"), "runs:read-all")
        await sign_in(page, live, reader)
        await _filter(page, "AWAITING_RECONCILIATION")
        row = page.locator(f'#runs-body tr[data-run="{run_id}"]')
        await expect(row).to_have_attribute("data-status", "AWAITING_RECONCILIATION")
        await row.locator("a").click()
        await expect(page.locator(".fact-rounds")).to_have_text("1")
        await expect(page.locator(".fact-tokens")).to_have_text(
            f"{run['prompt_tokens']} prompt + {run['completion_tokens']} completion"
        )
        asked = page.locator('#events li[data-kind="reconcile_requested"]')
        await expect(asked.locator(".kind")).to_have_text("Waiting for an answer on a write")
        await expect(asked.locator(".write-call")).to_contain_text(
            f"issue_refund (call {call}) was interrupted"
        )
        answer = answer_of(run, "not_applied", then="retry", reason="no row on the ledger")
        await answered(client, run_id, answer, "COMPLETED")
        said = page.locator('#events li[data-kind="reconciled"]')
        await expect(said.locator(".answer")).to_have_text(
            f"issue_refund (call {call}): not applied; run it again under the same idempotency key"
        )
        await expect(said.locator(".reason")).to_have_text("Reason: no row on the ledger")
        await expect(said).to_contain_text("answered by ops-")
        for entry in (asked, said):
            await expect(entry.locator("pre, details")).to_have_count(0)  # no raw JSON
        await page.screenshot(path=shot("run-reconciled.png"), full_page=True)


async def test_a_waiting_run_shows_its_spend_and_a_denial_its_reason(
    client: Client, a2a_settings: ApiSettings, page: Page, tmp_path: Path
) -> None:
    (tmp_path / "providers.yaml").write_text(PRICES)
    priced = a2a_settings.replace(providers={"file": tmp_path / "providers.yaml"})
    async with serving(client, priced) as live:
        who = name("dana")
        secret = token(live, who, *DECIDER)
        async with http(live, secret) as api:
            run_id = (await start(api, "helper", REFUND))["run_id"]
            waiting: dict[str, Any] = await wait_status(api, run_id, "WAITING_FOR_APPROVAL")
            prompt, completion = waiting["prompt_tokens"], waiting["completion_tokens"]
            assert waiting["iterations"] == 1 and prompt > 0 and completion > 0, waiting
            assert waiting["cost_usd"] == (prompt * 1 + completion * 2) / 1_000_000
            await sign_in(page, live, secret)
            await page.goto(f"{live.url}/ui/#/runs/{run_id}")
            await expect(page.locator(".fact-status")).to_have_text("WAITING_FOR_APPROVAL")
            await expect(page.locator(".fact-rounds")).to_have_text("1")
            await expect(page.locator(".fact-tokens")).to_have_text(
                f"{prompt} prompt + {completion} completion"
            )
            await expect(page.locator(".fact-cost")).to_have_text(f"${waiting['cost_usd']:.6f}")
            # The follow has caught up (each event it shows re-renders the pending card).
            await expect(page.locator('#events li[data-kind="approval_requested"]')).to_be_visible()
            await page.screenshot(path=shot("run-waiting.png"), full_page=True)
            # The page refuses a denial without a reason itself, as the API does.
            await page.locator("#run-pending button.deny").click()
            await expect(page.locator("#notice")).to_have_text("Give a reason to deny.")
            await page.locator("#run-pending input.reason").fill("over the refund limit")
            await page.locator("#run-pending button.deny").click()
            decision = page.locator('#events li[data-kind="approval"]')
            await expect(decision.locator(".verdict")).to_have_text(f"Denied by {who}")
            await expect(decision.locator(".reason")).to_have_text("Reason: over the refund limit")
            done = await wait_status(api, run_id, "COMPLETED")
    assert done["cost_usd"] is not None and done["cost_usd"] >= waiting["cost_usd"]
