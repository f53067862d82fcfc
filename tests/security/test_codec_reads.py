"""Issue 41, M3: the sign-in codec read every run. On cf842b3 `POST /codec/decode` decrypted
any payload of the namespace for a session holding `payloads:decode`: a principal who got
404 on a run decoded its start input, and a privacy-`none` prompt came back unredacted.
Now a payload names its run (associated data, so the name cannot be changed) and is decoded
only for someone who may read that run, and only as far as the run's privacy allows."""

import json
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.core.codec import RUN
from tests.api.codec_helpers import sealed_body, start_input
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status
from tests.security import test_codec_session as codec_session
from tests.security.test_codec_session import NS, signed_in

# The API as Temporal Web's codec server: keyed, admitting the Web UI's origin.
live = codec_session.live


def _texts(reply: httpx.Response) -> list[Any]:
    assert reply.status_code == 200, reply.text
    payloads = json_format.Parse(reply.text, Payloads()).payloads
    return [json.loads(p.data) for p in payloads]


@asynccontextmanager
async def _run(
    live: Live, plain: Client, who: str, profile: str, prompt: str
) -> AsyncIterator[tuple[str, str]]:
    """A run `who` started, waiting for approval, and its start input as Temporal holds it."""
    secret = token(live, who, "runs:start", "runs:read")
    async with http(live, secret) as client:
        run_id = (await start(client, profile, prompt))["run_id"]
        await wait_status(client, run_id, "WAITING_FOR_APPROVAL")
    yield run_id, await start_input(plain, run_id)


async def test_a_principal_decodes_only_the_runs_it_may_read(
    live: Live, temporal_env: WorkflowEnvironment, caplog: pytest.LogCaptureFixture
) -> None:
    alice, mallory, ops = name("alice"), name("mallory"), name("ops")
    canary = f"canary-{uuid.uuid4().hex[:8]}"
    async with _run(live, temporal_env.client, alice, "helper", f"{REFUND} {canary}") as (
        run_id,
        body,
    ):
        # Alice started it: she reads it.
        async with signed_in(live, token(live, alice, "runs:read", "payloads:decode")) as as_a:
            with caplog.at_level(logging.INFO, logger="agentrt.audit"):
                [request] = _texts(await as_a.post("/codec/decode", content=body, headers=NS))
            assert canary in json.dumps(request)
        audited = [r for r in caplog.records if getattr(r, "outcome", "") == "decoded"]
        assert audited and audited[-1].runs == [run_id]  # type: ignore[attr-defined]
        # Mallory holds the scope but gets 404 on the run: nothing of it decoded.
        async with signed_in(live, token(live, mallory, "runs:read", "payloads:decode")) as as_m:
            reply = await as_m.post("/codec/decode", content=body, headers=NS)
            assert _texts(reply) == ["[withheld: not a run you may read]"]
            assert canary not in reply.text
            async with http(live, token(live, mallory, "runs:read")) as api:
                assert (await api.get(f"/runs/{run_id}")).status_code == 404
        # Whoever reads every run reads it.
        async with signed_in(live, token(live, ops, "runs:read-all", "payloads:decode")) as as_o:
            [request] = _texts(await as_o.post("/codec/decode", content=body, headers=NS))
            assert canary in json.dumps(request)


async def test_a_payload_relabelled_to_a_readable_run_does_not_open(
    live: Live, temporal_env: WorkflowEnvironment
) -> None:
    alice, mallory = name("alice"), name("mallory")
    canary = f"canary-{uuid.uuid4().hex[:8]}"
    async with (
        _run(live, temporal_env.client, alice, "helper", f"{REFUND} {canary}") as (_, theirs),
        _run(live, temporal_env.client, mallory, "helper", REFUND) as (own_run, _),
    ):
        forged = json_format.Parse(theirs, Payloads())
        for p in forged.payloads:
            p.metadata[RUN] = own_run.encode()  # Mallory's own run, which she may read
        async with signed_in(live, token(live, mallory, "runs:read", "payloads:decode")) as as_m:
            reply = await as_m.post(
                "/codec/decode", content=json_format.MessageToJson(forged), headers=NS
            )
        assert reply.status_code == 400 and "does not open" in reply.text
        assert canary not in reply.text


async def test_never_more_than_the_runs_privacy_level_allows(
    live: Live, temporal_env: WorkflowEnvironment
) -> None:
    alice = name("alice")
    mail, key = "jane.doe@example.com", "sk-proj-" + "A1b2C3d4" * 4
    prompt = f"{REFUND} for {mail} with {key} marker-{uuid.uuid4().hex[:6]}"
    session = token(live, alice, "runs:read", "payloads:decode")
    async with (
        _run(live, temporal_env.client, alice, "guarded", prompt) as (_, metadata_body),
        _run(live, temporal_env.client, alice, "veiled", prompt) as (_, redacted_body),
        signed_in(live, session) as as_a,
    ):
        reply = await as_a.post("/codec/decode", content=metadata_body, headers=NS)
        assert _texts(reply) == ["[withheld: privacy level metadata]"]
        assert "marker-" not in reply.text and mail not in reply.text
        reply = await as_a.post("/codec/decode", content=redacted_body, headers=NS)
        [request] = _texts(reply)
        shown = json.dumps(request)
        assert "marker-" in shown and "Please refund order 1042" in shown  # the text, redacted
        assert mail not in reply.text and key not in reply.text
        assert "[REDACTED]" in shown and "***" in shown


async def test_a_payload_that_names_no_run_is_withheld(live: Live) -> None:
    """Written before runs were bound (v1), or outside any run: no run to judge it by."""
    async with signed_in(live, token(live, name("ops"), "admin")) as as_admin:
        reply = await as_admin.post(
            "/codec/decode", content=await sealed_body("unbound secret"), headers=NS
        )
        assert _texts(reply) == [
            "[withheld: this payload names no run (written before runs were bound)]"
        ]
        assert "unbound secret" not in reply.text
