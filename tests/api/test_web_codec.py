"""Temporal Web decodes for a signed-in operator, for real (issue 28): headless chromium
signs in to the approvals page (the token typed there, as ever), then opens the dev
server's own Temporal Web, whose codec endpoint is this API's `/codec` with "include
cross-origin credentials" on. The run's input shows decoded, with no token pasted into
Temporal Web. A browser that never signed in sees it encoded: the codec refused it."""

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext, Page, Response

from agentrt.api.settings import ApiSettings
from agentrt.workers.compose import WorkerResources
from tests.api.browser import browser, dev_server_with_ui, shot
from tests.api.codec_helpers import keyed_live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status

__all__ = ["browser"]  # the module-scoped fixture


@pytest_asyncio.fixture
async def web(tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    async with dev_server_with_ui(tmp_path) as served:
        yield served


async def _codec_settings(page: Page, ui: str, codec: str) -> None:
    """What an operator sets once in Temporal Web's codec settings (no secret in it): the
    endpoint, and "include cross-origin credentials". The stock UI keeps them in its
    localStorage; the standalone UI image takes them from TEMPORAL_CODEC_ENDPOINT and
    TEMPORAL_CODEC_INCLUDE_CREDENTIALS instead (docs/guides/temporal-web.md)."""
    await page.goto(f"{ui}/namespaces/default/workflows")
    await page.evaluate(
        """(codec) => {
            localStorage.setItem("endpoint", JSON.stringify(codec));
            localStorage.setItem("includeCredentials", "true");
            localStorage.setItem("overrideRemoteCodecConfiguration", "true");
        }""",
        codec,
    )


async def _open_run(
    context: BrowserContext, ui: str, codec: str, run_id: str
) -> tuple[Page, list[Response]]:
    page = await context.new_page()
    page.set_default_timeout(20_000)
    answers: list[Response] = []
    page.on("response", lambda r: answers.append(r) if "/codec/" in r.url else None)
    await _codec_settings(page, ui, codec)
    await page.goto(f"{ui}/namespaces/default/workflows/{run_id}")
    return page, answers


@pytest.mark.timeout(120)
async def test_a_signed_in_operator_reads_decoded_payloads_in_temporal_web(
    web: tuple[str, str],
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    browser: Browser,
    caplog: pytest.LogCaptureFixture,
) -> None:
    address, ui = web
    alice = name("alice")
    marker = f"ticket-{alice}"
    async with keyed_live(address, a2a_settings, a2a_parts, ui) as live:
        codec = f"{live.url}/codec"
        secret = token(live, alice, "runs:start", "runs:read", "payloads:decode")
        async with http(live, secret) as as_alice:
            run_id = (await start(as_alice, "helper", f"{REFUND} ({marker})"))["run_id"]
            await wait_status(as_alice, run_id, "WAITING_FOR_APPROVAL")

        operator = await browser.new_context(viewport={"width": 1400, "height": 1500})
        stranger = await browser.new_context(viewport={"width": 1400, "height": 1500})
        try:
            signin = await operator.new_page()
            await signin.goto(f"{live.url}/ui/")
            await signin.fill("#token", secret)
            async with signin.expect_response(lambda r: r.url.endswith("/me/session")) as made:
                await signin.click("#signin-form button[type=submit]")
            assert (await made.value).status == 204

            with caplog.at_level(logging.INFO, logger="agentrt.audit"):
                page, answers = await _open_run(operator, ui, codec, run_id)
                await page.get_by_text(marker).first.wait_for(state="visible", timeout=30_000)
                await page.screenshot(path=shot("temporal-web-decoded.png"), full_page=True)
            assert answers and all(r.status == 200 for r in answers if r.request.method == "POST")
            decoded = [r for r in caplog.records if getattr(r, "outcome", "") == "decoded"]
            assert decoded and {r.principal for r in decoded} == {alice}  # type: ignore[attr-defined]
            assert {r.namespace for r in decoded} == {"default"}  # type: ignore[attr-defined]

            # Never signed in: the same Temporal Web, the same settings, nothing decoded.
            page, answers = await _open_run(stranger, ui, codec, run_id)
            await page.get_by_text(run_id).first.wait_for(state="visible", timeout=30_000)
            for _ in range(300):  # until Temporal Web has asked the codec
                if any(r.request.method == "POST" for r in answers):
                    break
                await page.wait_for_timeout(100)
            await page.wait_for_timeout(1_000)  # what it would show once answered
            posts = [r for r in answers if r.request.method == "POST"]
            assert posts and all(r.status == 401 for r in posts), answers
            await page.screenshot(path=shot("temporal-web-not-signed-in.png"), full_page=True)
            assert marker not in await page.content()
        finally:
            await operator.close()
            await stranger.close()
