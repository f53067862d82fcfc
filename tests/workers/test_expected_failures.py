"""Errors an operator can act on (issue 9 item 9), with a real worker process: an unknown
profile and a provider's rejection are one log line each, without a traceback, and the
rejection keeps a bounded, redacted excerpt of the provider's own reason (a local HTTP
server answering 400 with a LiteLLM-style JSON error); a provider overloaded (529) that
the policy retries is one line per attempt, naming it (issue 40 item 4)."""

import asyncio
import os
import signal
import threading
import uuid
from pathlib import Path

import pytest
import yaml
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.errors import UnknownProfileError
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.render import event_text
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.activities.test_openai_provider import Canned, FakeServer, completion
from tests.workers.test_worker_process import _env, _spawn
from tests.workflows._waiting import until

KEY = "sk-live-0123456789abcdefghij"
LITELLM_400 = {
    "error": {
        "message": "litellm.BadRequestError: Invalid model name passed in model=gpt-nosuch. "
        f"Call `/v1/models` to view available models for your key. (Bearer {KEY}) " + "x" * 600,
        "type": "invalid_request_error",
        "param": "model",
        "code": "400",
    }
}


async def test_expected_failures_are_one_line_and_keep_the_status_not_the_body(
    temporal_env: WorkflowEnvironment, settings: Settings, parts: WorkerResources, tmp_path: Path
) -> None:
    proxy = FakeServer()
    threading.Thread(target=proxy.httpd.serve_forever, daemon=True).start()
    (tmp_path / "providers.yaml").write_text(
        yaml.safe_dump(
            {"providers": [{"name": "proxy", "base_url": proxy.base_url, "api_key_env": "T_KEY"}]}
        )
    )
    (tmp_path / "profiles.yaml").write_text(
        yaml.safe_dump(
            {"profiles": [{"name": "proxied", "instructions": "I", "model": "proxy:gpt-nosuch"}]}
        )
    )
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    address = temporal_env.client.service_client.config.target_host
    env = _env(settings, address, queue, T_KEY=KEY)
    env.update(
        AGENTRT_PROVIDERS_FILE=str(tmp_path / "providers.yaml"),
        AGENTRT_PROFILES_FILE=str(tmp_path / "profiles.yaml"),
    )
    log = tmp_path / "worker.log"
    proc = _spawn(env, log, "--task-queue", queue)
    try:
        runtime = AgentRuntime(temporal_env.client, RunStore(parts.ctx), queue)
        with pytest.raises(UnknownProfileError):
            await runtime.start("nosuch", "hello")
        proxy.replies.append(Canned(400, LITELLM_400))
        view = await runtime.run("proxied", "hello there")
        assert view.status is RunStatus.FAILED
        assert view.termination_reason is TerminationReason.PROVIDER_FAILED
        failed = (await runtime.events(view.run_id))[-1]
        assert failed.kind is EventKind.RUN_FAILED
        reason = failed.payload["error"]
        assert reason == "HTTP 400 from provider proxy (bad request) [invalid_request_error]"
        assert reason in event_text(failed).plain
        # A provider overloaded twice (Anthropic's 529), then answering: retried by the
        # policy, one line per failed attempt, no traceback (issue 40 item 4).
        overloaded = Canned(529, {"error": {"type": "overloaded_error"}},
                            headers={"retry-after-ms": "50"})  # fmt: skip
        proxy.replies += [overloaded, overloaded, Canned(200, completion({"content": "Hi."}))]
        view = await runtime.run("proxied", "hello again")
        assert view.status is RunStatus.COMPLETED and view.answer == "Hi."

        async def logged() -> bool:  # every failure's lines are out before the worker stops
            out = log.read_text()
            return (
                "unknown agent profile 'nosuch'" in out
                and "HTTP 400 from provider" in out
                and out.count("(ProviderUnavailable); attempt") >= 2
            )

        await until(logged, "the worker's log lines of every failure")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            await asyncio.to_thread(proc.wait, 40)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        proxy.httpd.shutdown()
        proxy.httpd.server_close()
    text = log.read_text()
    assert "Traceback" not in text, text
    assert KEY not in text
    profile_lines = [ln for ln in text.splitlines() if "unknown agent profile 'nosuch'" in ln]
    assert len(profile_lines) == 1, text
    assert "Invalid model name" not in text and "sk-live" not in text
    rejected = [ln for ln in text.splitlines() if "HTTP 400 from provider proxy" in ln]
    assert len(rejected) == 1, text
    retried = [ln for ln in text.splitlines() if "HTTP 529 from provider proxy" in ln]
    assert len(retried) == 2, text
    assert "attempt 1 of 5, retried" in retried[0] and "attempt 2 of 5, retried" in retried[1]
    assert "[overloaded_error]" in retried[0]
