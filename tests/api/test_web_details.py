"""Temporal Web explains a run: on the dev server's own UI (core/devserver.py with a UI
port), in headless chromium, a waiting run shows what it waits for in "Current Details"
(tool names at the guarded profile's `metadata` level, never arguments), and the decision
step's summary names the authenticated decider."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from playwright.async_api import Browser, expect
from temporalio.client import Client, WorkflowHandle

from agentrt.api.settings import ApiSettings
from agentrt.core.temporal import data_converter
from agentrt.workers.compose import WorkerResources
from tests.api.browser import browser, dev_server_with_ui, shot
from tests.api.conftest import _serve
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status
from tests.workflows._waiting import until_found

__all__ = ["browser"]  # the module-scoped fixture
METADATA_QUERY = "__temporal_workflow_metadata"


@pytest_asyncio.fixture
async def web(tmp_path: Path) -> AsyncIterator[tuple[Client, str]]:
    async with dev_server_with_ui(tmp_path) as (address, ui):
        yield await Client.connect(address, data_converter=data_converter()), ui


async def _details_once_waiting(handle: WorkflowHandle[Any, Any]) -> str:
    """The run's current details once its workflow has taken the pause. The status the API
    reads is committed by the pause's activity, before the workflow's next task sets the
    details: a query right after it can still find "running ..." (a loaded CI run did)."""

    async def look() -> str | None:
        details: str = (await handle.query(METADATA_QUERY)).current_details
        return None if details.startswith("running ") else details

    return await until_found(look, "the workflow taking the approval pause")


async def test_temporal_web_shows_what_a_run_waits_for_and_who_decided(
    web: tuple[Client, str], a2a_settings: ApiSettings, a2a_parts: WorkerResources, browser: Browser
) -> None:
    client, ui = web
    alice, bob = name("alice"), name("bob")
    async with _serve(client, a2a_settings, a2a_parts) as live:
        starter = token(live, alice, "runs:start", "runs:read")
        decider = token(live, bob, "runs:read-all", "runs:decide")
        async with http(live, starter) as as_alice, http(live, decider) as as_bob:
            run_id = (await start(as_alice, "guarded", REFUND))["run_id"]
            waiting = await wait_status(as_alice, run_id, "WAITING_FOR_APPROVAL")
            handle = client.get_workflow_handle(run_id)
            details = await _details_once_waiting(handle)
            assert details.startswith("waiting for approval: issue_refund, round 1, since ")
            assert "1042" not in details and "amount" not in details  # no arguments

            context = await browser.new_context(viewport={"width": 1400, "height": 1500})
            page = await context.new_page()
            page.set_default_timeout(20_000)
            try:
                # Straight to the tab's own address: on a loaded machine the UI can hold a
                # tab behind its loading state past any click timeout (a CI run did).
                execution = (await handle.describe()).run_id
                at = f"{ui}/namespaces/default/workflows/{run_id}/{execution}"
                await page.goto(f"{at}/user-metadata")
                # The UI renders the markdown of the details in a sandboxed frame.
                shown = page.frame_locator("#user-metadata-current-details").get_by_text(details)
                await expect(shown).to_be_visible(timeout=20_000)
                await page.screenshot(path=shot("temporal-web-waiting.png"))

                digest = waiting["pending_approval"]["turn_digest"]
                ok = await as_bob.post(
                    f"/runs/{run_id}/decision",
                    json={"verdict": "approve", "turn_digest": digest, "reason": "checked"},
                )
                assert ok.status_code == 200, ok.text
                await wait_status(as_bob, run_id, "COMPLETED")
                history = await handle.fetch_history()
                convert = client.data_converter.payload_converter
                summaries = [
                    convert.from_payload(e.user_metadata.summary, str)
                    for e in history.events
                    if e.HasField("activity_task_scheduled_event_attributes")
                    and e.user_metadata.HasField("summary")
                ]
                assert f"record decision: approve by {bob}" in summaries
                await page.goto(f"{at}/history")
                await page.get_by_role("button", name="Compact").click()
                step = page.get_by_text(f"record decision: approve by {bob}").first
                await expect(step).to_be_visible(timeout=20_000)
                await page.screenshot(path=shot("temporal-web-decided.png"), full_page=True)
            finally:
                await context.close()
