"""Found by the fuzz job (issue 41, item 6, the session codec surface): a decode body that
is not UTF-8 was a 500 with a traceback, on the operator API's session codec and on the
standalone codec server alike (protobuf's JSON parser raised UnicodeDecodeError, not its
ParseError). It is a 400, "body is not a Payloads JSON object", and nothing is logged
with a traceback."""

import asyncio
import logging
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from agentrt.api.settings import ApiSettings
from agentrt.workers.compose import WorkerResources
from bench.fuzz_codec import signed_in
from tests.api.codec_helpers import keyed_live
from tests.api.conftest import Live
from tests.api.ops_helpers import name, token
from tests.core.test_codec import AUTH, TOKEN, codec_server

NOT_UTF8 = [b"\xb2\xfc\tb\x19&\x99\xa1", b"\xdac@\xa2\x8d ", b'{"payloads": "\xff"}']
HEADERS = {"X-Namespace": "default", "Content-Type": "application/json"}


@pytest_asyncio.fixture
async def keyed(
    temporal_env: WorkflowEnvironment, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> AsyncIterator[Live]:
    address = temporal_env.client.service_client.config.target_host
    async with keyed_live(address, a2a_settings, a2a_parts, "http://127.0.0.1:8233") as served:
        yield served


async def test_a_body_that_is_not_utf8_is_a_400_on_the_session_codec(
    keyed: Live, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    secret = token(keyed, name("decoder"), "runs:read-all", "payloads:decode")
    cookie = await asyncio.to_thread(signed_in, keyed.url, secret)
    async with httpx.AsyncClient(base_url=keyed.url, timeout=30) as http:
        for body in NOT_UTF8:
            reply = await http.post(
                "/codec/decode",
                content=body,
                headers={**HEADERS, "Cookie": f"agentrt_codec={cookie}"},
            )
            assert reply.status_code == 400, reply.text
            assert reply.json() == {"error": "body is not a Payloads JSON object"}
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


async def test_a_body_that_is_not_utf8_is_a_400_on_the_standalone_codec_server() -> None:
    async with codec_server(TOKEN) as http:
        for body in NOT_UTF8:
            reply = await http.post("/decode", content=body, headers=AUTH)
            assert reply.status_code == 400, reply.text
