"""The native providers end to end on the real dev server and a worker: a run whose model
is Anthropic Messages or Gemini (a local HTTP server speaking that wire format) calls a
tool, gets its result back in the vendor's shape, answers, and carries usage and the price
table's cost. A rate limit is retried by Temporal (one request per attempt); a refusal
ends the run FAILED with the typed error."""

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
import yaml
from temporalio.client import Client

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.live import LiveDelta
from agentrt.contracts.views import EventView
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.workers.compose import WorkerResources, build
from tests._built import serving_runtime
from tests.activities.native_wire import (
    ANTHROPIC,
    VENDORS,
    Vendor,
    anthropic_error_event,
    anthropic_events,
    gemini_error_event,
    gemini_events,
)
from tests.activities.test_openai_provider import Canned, FakeServer
from tests.workflows.test_models import llm_events, profile

PRICE = {"input": 3.0, "output": 15.0}  # USD per 1M tokens
KEYS = {v.api: f"{v.api}-secret-key" for v in VENDORS}


@dataclass
class World:
    parts: WorkerResources
    settings: Settings
    servers: dict[str, FakeServer]


@pytest.fixture(scope="module")
def world(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    servers = {v.api: FakeServer() for v in VENDORS}
    for s in servers.values():
        threading.Thread(target=s.httpd.serve_forever, daemon=True).start()
    d = tmp_path_factory.mktemp("native")
    (d / "profiles.yaml").write_text(yaml.safe_dump({"profiles": [
        profile(f"{v.api}-agent", f"{v.api}:m-test", tools=["lookup_order"]) for v in VENDORS
    ]}))  # fmt: skip
    (d / "providers.yaml").write_text(yaml.safe_dump({"providers": [
        {"name": v.api, "api": v.api, "base_url": servers[v.api].base_url.removesuffix("/v1"),
         "api_key_env": f"AGENTRT_T_{v.api.upper()}_KEY", "prices": {"default": PRICE}}
        for v in VENDORS
    ]}))  # fmt: skip
    mine = settings.replace(worker={"profiles_file": d / "profiles.yaml"},
                            providers={"file": d / "providers.yaml"})  # fmt: skip
    with pytest.MonkeyPatch.context() as mp:
        for v in VENDORS:
            mp.setenv(f"AGENTRT_T_{v.api.upper()}_KEY", KEYS[v.api])
        parts = build(mine)
    yield World(parts, mine, servers)
    parts.close()
    for s in servers.values():
        s.stop()


@pytest_asyncio.fixture
async def rt(client: Client, world: World) -> AsyncIterator[AgentRuntime]:
    async with serving_runtime(client, world.parts, world.settings) as runtime:
        yield runtime


@pytest.fixture(params=VENDORS, ids=lambda v: v.api)
def vendor(request: pytest.FixtureRequest, world: World) -> Vendor:
    v: Vendor = request.param
    world.servers[v.api].replies.clear()
    world.servers[v.api].seen.clear()
    return v


async def test_a_tool_turn_then_an_answer_with_cost_and_a_retried_rate_limit(
    rt: AgentRuntime, world: World, vendor: Vendor
) -> None:
    server = world.servers[vendor.api]
    limited = vendor.error_body(429, "rate_limit_error")
    server.replies += [
        Canned(body=vendor.reply(calls=(("lookup_order", {"order_id": "1042"}),))),
        Canned(429, limited, {"retry-after": "1"}),  # Temporal retries the model activity
        Canned(body=vendor.reply(text="Order 1042 is fine.")),
    ]
    view = await rt.run(f"{vendor.api}-agent", "How is order 1042?")
    assert (view.status, view.answer) == (RunStatus.COMPLETED, "Order 1042 is fine.")
    # The worker publishes live output, so the provider streamed each call.
    assert len(server.seen) == 3 and {s.path for s in server.seen} == {vendor.stream_path}
    header, prefix = vendor.key_header
    assert {s.headers[header] for s in server.seen} == {prefix + KEYS[vendor.api]}
    # The tool ran, and its result went back to the model in the vendor's own shape.
    ((_, result),) = vendor.results(server.seen[-1].body)
    assert "1042" in result
    calls = llm_events(await rt.events(view.run_id))
    assert [c["tool_calls"][0]["name"] for c in calls[:1]] == ["lookup_order"]
    prompt, completion = vendor.usage
    assert (view.prompt_tokens, view.completion_tokens) == (2 * prompt, 2 * completion)
    cost = (prompt * PRICE["input"] + completion * PRICE["output"]) / 1_000_000
    assert [c["cost_usd"] for c in calls] == [pytest.approx(cost)] * 2
    assert view.cost_usd == pytest.approx(2 * cost)


async def test_a_refusal_fails_the_run_with_the_typed_error(
    rt: AgentRuntime, world: World, vendor: Vendor
) -> None:
    server = world.servers[vendor.api]
    server.replies.append(Canned(body=vendor.reply(stop="refusal" if vendor.api == "anthropic"
                                                   else "SAFETY")))  # fmt: skip
    view = await rt.run(f"{vendor.api}-agent", "Something it will not do")
    assert view.status is RunStatus.FAILED
    failed = (await rt.events(view.run_id))[-1]
    assert failed.kind is EventKind.RUN_FAILED
    assert failed.payload["error_type"] == "ProviderRejected"
    assert "refused" in failed.payload["error"]
    assert len(server.seen) == 1  # not retried: the same request gets the same refusal


async def test_the_text_streams_live_and_a_retry_withdraws_the_failed_attempts_part(
    rt: AgentRuntime, world: World, vendor: Vendor
) -> None:
    """The first attempt shows its first piece while the server holds the rest (the call
    has not ended), then the stream carries an overloaded error; Temporal retries, and the
    retry's retract withdraws the piece before the second attempt's text."""
    server = world.servers[vendor.api]
    sse = anthropic_events if vendor is ANTHROPIC else gemini_events
    partial = sse(vendor.reply(text="Half an answer"))
    first = next(i for i, e in enumerate(partial) if "Half an" in e) + 1
    overloaded = (anthropic_error_event("overloaded_error") if vendor is ANTHROPIC
                  else gemini_error_event(503, "UNAVAILABLE"))  # fmt: skip
    hold = threading.Event()
    server.replies += [
        Canned(body=[*partial[:first], overloaded], hold=hold, hold_after=first),
        Canned(body=sse(vendor.reply(text="Order 1042 is fine."))),
    ]
    run_id = await rt.start(f"{vendor.api}-agent", "How is order 1042?")
    items: list[EventView | LiveDelta] = []

    async def collect() -> None:
        async for item in rt.follow(run_id):
            items.append(item)

    follower = asyncio.create_task(collect())
    try:
        for _ in range(400):
            if any(isinstance(i, LiveDelta) for i in items):
                break
            await asyncio.sleep(0.05)
        pieces = [i for i in items if isinstance(i, LiveDelta)]
        # (The publisher may hold back the end of the text, as redaction can ask.)
        assert {(p.kind, p.attempt) for p in pieces} == {("delta", 1)}
        shown = "".join(p.text for p in pieces)
        assert shown and "Half an".startswith(shown)
        assert len(server.seen) == 1  # the call is still open: the server holds the rest
    finally:
        hold.set()
    await asyncio.wait_for(follower, 60)
    pieces = [i for i in items if isinstance(i, LiveDelta)]
    # The failed attempt withdraws its piece (and the retry withdraws attempt 1 again, for
    # a worker that died before it could); then the retry's text.
    retract = next(i for i, p in enumerate(pieces) if p.kind == "retract")
    assert {(p.kind, p.attempt) for p in pieces[:retract]} == {("delta", 1)}
    after = pieces[retract:]
    assert {p.attempt for p in after if p.kind == "retract"} == {1}
    assert {p.attempt for p in after if p.kind == "delta"} <= {2}
    # (Rows go once the turn is stored: a follower may see the committed turn, the truth
    # that replaces the deltas, before the last of them, or any.)
    assert "Order 1042 is fine.".startswith("".join(p.text for p in after))
    (turn,) = [i for i in items if isinstance(i, EventView) and i.kind is EventKind.LLM]
    assert turn.payload["content"] == "Order 1042 is fine."
    view = await rt.status(run_id)
    assert (view.status, view.answer) == (RunStatus.COMPLETED, "Order 1042 is fine.")
    assert len(server.seen) == 2 and {s.path for s in server.seen} == {vendor.stream_path}
