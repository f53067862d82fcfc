"""The native providers' API keys are never logged: with every logger at DEBUG (the SDKs
log their requests there), a call that succeeds and one that fails leave the key in no
log record, and the failure's message carries neither the key nor the prompt."""

import logging

import pytest
from temporalio.exceptions import ApplicationError

from tests.activities import test_native_providers as native
from tests.activities.native_wire import Vendor
from tests.activities.test_openai_provider import SECRET_PROMPT, Canned, FakeServer

server = native.server  # the local server fixture
vendor = native.vendor  # each native API in turn


async def test_the_key_is_in_no_log_record_even_at_debug(
    server: FakeServer, vendor: Vendor, caplog: pytest.LogCaptureFixture
) -> None:
    server.replies.clear()
    server.seen.clear()
    server.replies += [
        Canned(body=vendor.reply(text="fine")),
        Canned(401, vendor.error_body(401, f"bad key {native.API_KEY}")),
    ]
    p = vendor.make(api_key=native.API_KEY, base_url=native.root(server), timeout=5)
    with caplog.at_level(logging.DEBUG):
        await p.complete(native.tool_round())
        with pytest.raises(ApplicationError) as info:
            await p.complete(native.tool_round())
    await p.aclose()
    header, prefix = vendor.key_header
    assert server.seen[0].headers[header] == prefix + native.API_KEY  # it was sent
    assert caplog.records  # the SDKs did log at DEBUG
    logged = "\n".join(f"{r.getMessage()} {r.args!r} {r.__dict__!r}" for r in caplog.records)
    assert native.API_KEY not in logged
    assert native.API_KEY not in str(info.value) and SECRET_PROMPT not in str(info.value)
