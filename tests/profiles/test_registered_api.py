"""The API reads the workers' registration, not a profiles file: a profile a worker
registers after the API started is on the Agent Card at once and may be started; one no
worker registered is unknown. On a database of its own, so the profiles it registers reach
no other test's API."""

import uuid
from collections.abc import AsyncIterator, Iterator
from email.utils import parsedate_to_datetime

import httpx
import pytest
import pytest_asyncio
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from temporalio.client import Client

from agentrt import Profile
from agentrt.api.settings import ApiSettings
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import build
from tests._db import migrated, scratch_database
from tests.api.conftest import Live, _serve, a2a_settings  # noqa: F401  (fixture)

# ruff: noqa: F811


@pytest.fixture(scope="module")
def own_settings(
    a2a_settings: ApiSettings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiSettings]:
    with scratch_database("reg", tmp_path_factory.mktemp("reg") / "agentrt.db") as url:
        migrated(url)  # as `agentrt migrate` does: no worker migrates
        yield a2a_settings.replace(database={"url": url})


@pytest_asyncio.fixture
async def live(client: Client, own_settings: ApiSettings) -> AsyncIterator[Live]:
    parts = build(own_settings)  # registers the A2A fixtures' profiles
    try:
        async with _serve(client, own_settings, parts) as served:
            yield served
    finally:
        parts.close()


def _skills(card: httpx.Response) -> list[str]:
    return sorted(s["id"] for s in card.json()["skills"])


async def test_a_profile_registered_after_the_api_started_is_served_at_once(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        before = await http.get(AGENT_CARD_WELL_KNOWN_PATH)
        assert _skills(before) == ["fallback", "helper", "redactor", "typed"]
        late = Profile(
            name="late",
            instructions="Read only.",
            model="scripted:demo",
            tools=["lookup_order"],
            publish=True,
            description="Came later.",
        )
        registry = ProfileRegistry(live.parts.ctx)
        worker = registry.register([late])  # as a worker starting now does
        after = await http.get(AGENT_CARD_WELL_KNOWN_PATH)
        assert _skills(after) == ["fallback", "helper", "late", "redactor", "typed"]
        assert after.headers["etag"] != before.headers["etag"]
        assert parsedate_to_datetime(after.headers["last-modified"]) >= parsedate_to_datetime(
            before.headers["last-modified"]
        )
        secret = PrincipalStore(live.parts.ctx).create(
            f"p-{uuid.uuid4().hex[:8]}", ["runs:start", "runs:read"], profiles=["*"]
        )[1]
        auth = {"Authorization": f"Bearer {secret}"}
        unknown = await http.post("/runs", json={"profile": "never", "prompt": "hi"}, headers=auth)
        assert unknown.status_code == 400, unknown.text
        error = unknown.json()["error"]
        # Refused by the API itself: no worker was asked.
        assert error["type"] == "unknown_profile" and "no worker has registered" in error["message"]
        # `late` is registered, so the API starts it; the worker polling here does not serve
        # it and refuses it at its begin (a deployment mismatch the worker reports).
        late_start = await http.post(
            "/runs", json={"profile": "late", "prompt": "hi"}, headers=auth
        )
        assert late_start.status_code == 400, late_start.text
        assert "the worker's profiles do not declare it" in late_start.json()["error"]["message"]
        # The worker that registered `late` goes: its skill leaves the card, and the
        # card says it changed.
        registry.withdraw(worker)
        gone = await http.get(AGENT_CARD_WELL_KNOWN_PATH)
        assert _skills(gone) == ["fallback", "helper", "redactor", "typed"]
        assert parsedate_to_datetime(gone.headers["last-modified"]) >= parsedate_to_datetime(
            after.headers["last-modified"]
        )
