"""`GET /runs/{id}/live`: a streaming provider's text reaches an SSE client while the model
call is still running, resumes from `Last-Event-ID` without repeats, and follows the run's
privacy level; the committed event still carries the whole turn."""

from collections.abc import Callable
from typing import Any

import httpx

from bench.streaming_server import DROP, GATE
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, Frame, error_type, frames, http, name, start, token
from tests.live.conftest import Serve


def _text(got: list[Frame]) -> str:
    """What a client shows: deltas appended, a retract dropping the turn's text so far."""
    text = ""
    for f in got:
        if f.event == "delta":
            text += f.data["text"]
        elif f.event == "retract":
            text = ""
    return text


async def _follow(
    c: httpx.AsyncClient,
    run_id: str,
    *,
    opened: Callable[[], None] | None = None,
    headers: dict[str, str] | None = None,
    each: Callable[[list[Frame]], None] | None = None,
) -> list[Frame]:
    got: list[Frame] = []
    async with c.stream("GET", f"/runs/{run_id}/live", headers=headers) as reply:
        assert reply.status_code == 200, await reply.aread()
        if opened is not None:
            opened()  # the follow is attached: what the run streams from here reaches it
        async for f in frames(reply):
            got.append(f)
            if each is not None:
                each(got)  # what the test does once the follower has read this far
    return got


async def test_tokens_reach_an_sse_client_while_the_call_runs_and_resume(
    serve_streaming: Serve,
) -> None:
    script = ["Hello ", "from ", GATE, "the ", "stream.", 0.5]
    async with serve_streaming(script) as (live, server):
        who = name("alice")
        async with http(live, token(live, who, "runs:start", "runs:read")) as c:
            run_id = (await start(c, "streamer", "Say hello"))["run_id"]
            first: list[Frame] = []
            async with c.stream("GET", f"/runs/{run_id}/live") as reply:
                async for f in frames(reply):
                    first.append(f)
                    if _text(first) == "Hello from ":
                        break
            # The provider is held at the gate: the call is running, nothing is committed.
            assert not server.gate.is_set()
            run = (await c.get(f"/runs/{run_id}")).json()
            assert run["status"] == "RUNNING"
            assert "llm" not in [f.event for f in first]
            server.gate.set()
            rest = await _follow(c, run_id, headers={"Last-Event-ID": first[-1].raw_id or ""})
    assert rest[-1].event == "end" and rest[-1].data["status"] == "COMPLETED"
    assert _text(first + rest) == "Hello from the stream."
    assert _text(rest) == "the stream."  # nothing from before the resume point again
    (turn,) = [f for f in rest if f.event == "llm"]
    assert turn.data["payload"]["content"] == "Hello from the stream."
    assert [f.event for f in rest].index("llm") > max(
        i for i, f in enumerate(rest) if f.event == "delta"
    )  # the deltas come before the event that commits them
    body: dict[str, Any] = server.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_redacted_runs_stream_no_secret_and_metadata_runs_no_text(
    serve_streaming: Serve,
) -> None:
    secret = "sk-abcdefghijklmnopqrstuvwx"
    # Held at the gate until the follower is attached: a call that ended before it came
    # would show it no deltas at all, only the committed turn (CI, on a loaded machine).
    script = [GATE, "Your key is sk-abcdefgh", "ijklmnop", "qrstuvwx and", " that is all.", 0.3]
    async with serve_streaming(script) as (live, server):
        who = name("alice")
        async with http(live, token(live, who, "runs:start", "runs:read")) as c:
            redacted = (await start(c, "streamer-redacted", "key?"))["run_id"]
            got = await _follow(c, redacted, opened=server.gate.set)
            quiet = (await start(c, "streamer-metadata", "key?"))["run_id"]
            silent = await _follow(c, quiet)
    deltas = "".join(f.data["text"] for f in got if f.event == "delta")
    # The last words are published as the call ends, as its turn is stored: a subscriber
    # may see them only in the committed event, which is the truth the deltas lead up to.
    assert deltas.startswith("Your key is [REDACTED] and ")
    (turn,) = [f for f in got if f.event == "llm"]
    assert turn.data["payload"]["content"].startswith(deltas)
    assert secret[:12] not in str([f.data for f in got])
    assert got[-1].data["status"] == "COMPLETED"
    assert [f for f in silent if f.event in ("delta", "retract")] == []
    assert silent[-1].data["status"] == "COMPLETED"


async def test_the_live_follow_keeps_the_events_principal_and_scope_rules(live: Live) -> None:
    alice, bob = name("alice"), name("bob")
    async with http(live, token(live, alice, "runs:start", "runs:read")) as c:
        run_id = (await start(c, "helper", REFUND))["run_id"]
    for secret, status in (
        (token(live, bob, "runs:read"), 404),  # not his run: as absent
        (token(live, bob, "runs:start"), 403),  # no read scope
        (None, 401),
    ):
        async with http(live, secret) as c:
            reply = await c.get(f"/runs/{run_id}/live")
            assert reply.status_code == status, reply.text
    async with http(live, token(live, bob, "runs:read-all")) as c:
        reply = await c.get(f"/runs/{run_id}/live", headers={"Last-Event-ID": "nonsense"})
        assert reply.status_code == 400 and error_type(reply) == "bad_last_event_id"


async def test_a_call_cut_mid_stream_is_withdrawn_then_retried(serve_streaming: Serve) -> None:
    """The provider hangs up mid-reply: the failed attempt withdraws its text at once, the
    retry again as it starts, and the client ends with the retry's text only."""
    # The retry is held at the gate until the follower has read its text: the turn's commit
    # prunes its live rows, and a follower slower than that (CI, on a loaded machine) would
    # see the committed turn instead, which is the design but not what this test is about.
    script = ["Partial ", "text ", 0.3, DROP], ["Fine ", "answer.", GATE, 0.1]
    async with serve_streaming(*script) as (live, server):
        async with http(live, token(live, name("alice"), "runs:start", "runs:read")) as c:
            run_id = (await start(c, "streamer", "Say it"))["run_id"]

            def read_so_far(got: list[Frame]) -> None:
                if _text(got) == "Fine answer.":
                    server.gate.set()

            got = await _follow(c, run_id, each=read_so_far)
    pieces = [f.data for f in got if f.event in ("delta", "retract")]
    first_retract = next(i for i, p in enumerate(pieces) if p["kind"] == "retract")
    assert "".join(p["text"] for p in pieces[:first_retract]) == "Partial text "
    retracts = [(p["attempt"], p["offset"]) for p in pieces if p["kind"] == "retract"]
    assert retracts == [(1, len("Partial text ")), (1, -1)]  # the failure's, the retry's
    assert _text(got) == "Fine answer."
    (turn,) = [f for f in got if f.event == "llm"]
    assert turn.data["payload"]["content"] == "Fine answer."
    assert got[-1].data["status"] == "COMPLETED" and len(server.bodies) == 2
