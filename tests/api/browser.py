"""Headless Debian chromium driven over CDP by Playwright (never a downloaded browser), and
where the browser tests put their screenshots."""

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, async_playwright, expect
from temporalio.client import Client

from agentrt.core.devserver import free_port, start_dev_server, wait_for_port

CHROMIUM = Path("/usr/bin/chromium")
# The docs' screenshots: refreshed when AGENTRT_UPDATE_SCREENSHOTS=1, otherwise the tests
# still take them (a page that does not render fails), into a scratch folder, so a test run
# leaves the checkout clean.
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SCREENSHOTS = (
    DOCS
    if os.environ.get("AGENTRT_UPDATE_SCREENSHOTS") == "1"
    else Path(os.environ.get("TMPDIR", "/tmp")) / "agentrt-screenshots"
)
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


PAGE_WAIT_MS = 30_000


def shot(name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / name


@pytest_asyncio.fixture(scope="module")
async def browser() -> AsyncIterator[Browser]:
    if not os.path.exists(CHROMIUM):  # noqa: ASYNC240  (one stat, before any await)
        # ./dev test installs it (browser_up); a missing browser is a broken setup, not a skip.
        pytest.fail("/usr/bin/chromium is missing: run ./dev test, or apt-get install chromium")
    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            await b.close()


@pytest_asyncio.fixture
async def page(browser: Browser, request: pytest.FixtureRequest) -> AsyncIterator[Page]:
    """A fresh browser context and page; a test module may set VIEWPORT = (width, height)."""
    width, height = getattr(request.module, "VIEWPORT", (1100, 800))
    context = await browser.new_context(viewport={"width": width, "height": height})
    p = await context.new_page()
    # Both bounds only say when to give up waiting for what the page shows (a passing test
    # goes on as soon as it shows): generous, for a machine the parallel suite loads.
    p.set_default_timeout(PAGE_WAIT_MS)
    expect.set_options(timeout=PAGE_WAIT_MS)
    try:
        yield p
    finally:
        await context.close()


async def _until_frontend_serves(address: str, within: float = 30.0) -> None:
    """The port opens a moment before the frontend answers: a client connected at once was
    refused "Frontend is not healthy yet" (CI, PostgreSQL pass). Connect until it serves."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            await Client.connect(address)
            return
        except RuntimeError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.2)


@asynccontextmanager
async def dev_server_with_ui(folder: Path) -> AsyncIterator[tuple[str, str]]:
    """A dev server of its own, with its Temporal Web: (gRPC address, UI origin)."""
    port, ui_port = free_port(), free_port()
    proc = await start_dev_server(port=port, ui_port=ui_port, db_file=None, log=folder / "t.log")
    try:
        await wait_for_port(port)
        await wait_for_port(ui_port)
        await _until_frontend_serves(f"127.0.0.1:{port}")
        yield f"127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}"
    finally:
        proc.terminate()
        await proc.wait()
