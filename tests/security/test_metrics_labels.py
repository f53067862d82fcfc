"""No user content in any metric label (issue 28 item 6). A run whose prompt and tool
arguments carry a marker goes through the operator API and the A2A server, the operator
asks for it by id and for paths made of the marker, and neither the worker's /metrics nor
the API's holds the marker or the run id: routes are templates, tools and providers are
configured names. The series an on-call engineer reads are there, with those labels."""

import re
import uuid
from pathlib import Path

import pytest
import yaml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client

from agentrt.api.metrics import ApiMetrics
from agentrt.api.settings import ApiSettings
from agentrt.contracts.enums import RunStatus
from agentrt.core.settings import ProviderSettings
from bench.a2a_fixtures import FIXTURES
from tests._built import built
from tests.api.conftest import Live, _serve, user_message
from tests.api.ops_helpers import ALL_SCOPES, http, name, start, token, wait_status


def _series(text: str, sample: str) -> list[dict[str, str]]:
    """The label sets of the samples named `sample` in a scrape."""
    return [
        dict(found.labels)
        for family in text_string_to_metric_families(text)
        for found in family.samples
        if found.name == sample
    ]


def _rules(tmp: Path) -> Path:
    """The demo's rules, which put the prompt's order id into the tool's arguments, then the
    A2A fixtures' (their outage rules fail the primary provider over to its fallback)."""
    demo = yaml.safe_load(ProviderSettings().rules_file.read_text())
    fixtures = yaml.safe_load((FIXTURES / "rules.yaml").read_text())
    both = {**fixtures, "rules": demo["rules"] + fixtures["rules"]}
    (tmp / "rules.yaml").write_text(yaml.safe_dump(both))
    return tmp / "rules.yaml"


@pytest.mark.timeout(120)
async def test_no_prompt_argument_id_or_path_reaches_a_label(
    client: Client,
    a2a_settings: ApiSettings,
    tmp_path: Path,
) -> None:
    marker = f"mk{uuid.uuid4().hex[:12]}"
    api = ApiMetrics()
    settings = a2a_settings.replace(providers={"rules_file": _rules(tmp_path)})
    with built(settings) as parts:
        async with _serve(client, settings, parts, metrics=api) as live:
            run_id = await _drive(live, marker)
        worker_text = generate_latest(parts.metrics.registry).decode()
    api_text = generate_latest(api.registry).decode()

    for text in (worker_text, api_text):
        assert marker not in text
        assert run_id not in text
    # The series are there, labelled by configuration and templates only.
    routes = {
        (s["method"], s["route"], s["status"])
        for s in _series(api_text, "agentrt_api_requests_total")
    }
    assert ("POST", "/runs", "201") in routes or ("POST", "/runs", "200") in routes
    assert ("GET", "/runs/{run_id}", "200") in routes
    assert ("GET", "/runs/{run_id}", "404") in routes  # the marker as an id
    assert ("GET", "unmatched", "404") in {
        (m, r, st) for m, r, st in routes if r == "unmatched"
    } or any(r in ("unmatched",) or "{" in r for _, r, _ in routes)
    assert ("POST", "/", "200") in routes  # A2A JSON-RPC
    tools = {(s["tool"], s["result"]) for s in _series(worker_text, "agentrt_tool_calls_total")}
    assert ("lookup_order", "ok") in tools
    calls = {
        (s["provider"], s["result"]) for s in _series(worker_text, "agentrt_model_calls_total")
    }
    # Providers by name, not the model a profile named; the outage's failed call an error.
    assert calls == {("scripted", "ok"), ("scripted", "error"), ("strict", "ok")}
    assert _series(worker_text, "agentrt_activity_schedule_to_start_seconds_count")
    assert "agentrt_store_up 1.0" in api_text and "agentrt_store_up 1.0" in worker_text
    assert re.search(r"^agentrt_oldest_waiting_run_seconds \d", api_text, re.M)


async def _drive(live: Live, marker: str) -> str:
    """A refund of an order whose id carries the marker (the demo rules put it into the
    tool's arguments), read back, cancelled; then the marker as paths, ids and a method."""
    async with http(live, token(live, name("metrics"), *ALL_SCOPES)) as client:
        run_id = str(
            (await start(client, "helper", f"Please refund order 1042-{marker}"))["run_id"]
        )
        await wait_status(client, run_id, RunStatus.COMPLETED.value)
        events = await client.get(f"/runs/{run_id}/events", params={"q": marker})
        # The marker did reach the prompt and the tool's arguments (the run's own record).
        assert events.status_code == 200
        assert '"order_id":"1042-' + marker in events.text.replace(" ", ""), events.text
        assert (await client.post(f"/runs/{run_id}/cancel")).status_code in (202, 409)
        failed_over = await start(client, "fallback", f"Answer {marker} during an outage")
        # It fails over, then ends FAILED: the fallback keeps no answer (strict=none).
        await wait_status(client, failed_over["run_id"], RunStatus.FAILED.value)
        assert (await client.get(f"/runs/{uuid.uuid4()}")).status_code == 404
        assert (await client.get(f"/runs/{marker}")).status_code in (404, 422)
        assert (await client.get(f"/{marker}/{marker}/{marker}")).status_code in (401, 404)
        await client.request(marker.upper(), "/runs")  # a method nobody defined
    sent = await live.rpc("SendMessage", {"message": user_message(f"order 7 {marker}?")})
    assert "result" in sent, sent
    return run_id
