"""The live-output tests' server: the operator API and an in-process worker whose `openai`
provider is the local streaming server (tests/live/streaming_server.py)."""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from bench.streaming_server import Step, StreamingServer, streaming
from tests.api.conftest import Live, a2a_parts, a2a_settings, live, serving

# The operator API's fixtures, as tests/api has them.
__all__ = ["a2a_parts", "a2a_settings", "live"]

PROFILES = Path(__file__).parent / "fixtures" / "profiles.yaml"
Serve = Callable[..., AbstractAsyncContextManager[tuple[Live, StreamingServer]]]


def streaming_settings(base: ApiSettings, url: str) -> ApiSettings:
    return base.replace(
        worker={"profiles_file": PROFILES},
        providers={"openai_api_key": "test-key", "openai_base_url": url},
        api={"key_profiles": ""},
    )


@pytest.fixture
def serve_streaming(client: Client, a2a_settings: ApiSettings) -> Serve:
    @asynccontextmanager
    async def _serve(*scripts: list[Step]) -> AsyncIterator[tuple[Live, StreamingServer]]:
        with streaming(*scripts) as (server, url):
            async with serving(client, streaming_settings(a2a_settings, url)) as live:
                yield live, server

    return _serve
