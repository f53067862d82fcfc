"""Answers that move a waiting run (issue 41), over HTTP against the live server.

Reconcile answers: `POST /runs/{id}/reconcile` bodies near a valid answer (the pending
write's call id and fence, each answer and `then`, results up to past their cap, unknown
fields, wrong types, NUL and lone surrogates), raw bodies, run ids of every kind and tokens
with and without `runs:reconcile`, against runs waiting AWAITING_RECONCILIATION. As with
decisions, no case is a valid answer (a body naming the write's fence gets a wrong one), so
every reply must be a typed refusal and the run must keep waiting with the same rows.

Input answers: A2A follow-ups (JSON-RPC and REST) to tasks waiting for input: generated
texts (NUL, lone surrogates, whitespace, past the part cap), parts of other kinds, roles,
message ids (an earlier follow-up's too), context ids, metadata. A refusal is typed and
changes no row; an accepted answer moves the task on, and a new waiting task takes its
place in the pool."""

import json
import uuid
from collections.abc import Callable
from contextlib import closing
from typing import Any

from hypothesis import strategies as st
from sqlalchemy import Engine

from bench.fuzz_core import Finding, LogTrap, Tally, Verdict, drive
from bench.fuzz_http import HttpSurface
from bench.fuzz_local import JSON

# Text a database or a JSON encoder cannot take, beside ordinary and oversized text.
ODD_TEXT = st.sampled_from(["", " ", "a\x00b", "\ud800", "\udc00x", "ok", "é" * 3, "r" * 4_001])
TEXT = ODD_TEXT | st.text(max_size=30)


def reconcile_cases(
    runs: dict[str, dict[str, str]], tokens: list[str]
) -> st.SearchStrategy[tuple[str, str, bytes]]:
    """(path, token, body) for `runs`: run id -> {"call_id", "fence"} of its pending write."""
    ids = sorted(runs)
    run_id = (
        st.sampled_from(ids) | st.uuids().map(str) | st.sampled_from(["nope", "%00", "x" * 300])
    )
    calls = [w["call_id"] for w in runs.values()]
    fences = [w["fence"] for w in runs.values()]
    body = st.fixed_dictionaries(
        {},
        optional={
            "call_id": st.sampled_from(calls) | TEXT | JSON,
            "fence": st.sampled_from(fences) | TEXT | JSON,
            "answer": st.sampled_from(["applied", "not_applied", "unknown", "APPLIED", ""]) | JSON,
            "result": st.none() | TEXT | st.just("x" * 100_001) | JSON,
            "then": st.sampled_from(["retry", "error", "fail", ""]) | JSON,
            "reason": st.none() | TEXT | st.just("r" * 2_001),
            "answered_by": st.just("mallory"),
            "extra": JSON,
        },
    )
    raw = body.map(lambda b: json.dumps(b).encode()) | JSON.map(
        lambda v: json.dumps(v, default=str).encode()
    ) | st.binary(max_size=40)  # fmt: skip
    return st.tuples(run_id.map(lambda r: f"/runs/{r}/reconcile"), st.sampled_from(tokens), raw)


def _refusable(body: bytes, fences: set[str]) -> bytes:
    """The body, with a wrong fence if it names a real one: no case may be a valid answer."""
    try:
        value = json.loads(body)
    except ValueError:
        return body
    if isinstance(value, dict) and isinstance(value.get("fence"), str) and value["fence"] in fences:
        return json.dumps({**value, "fence": "0" * 16}).encode()
    return body


def reconcile_surface(
    base_url: str,
    engine: Engine,
    runs: dict[str, dict[str, str]],
    tokens: list[str],
    cases: int,
    seed_value: int | None,
    trap: LogTrap,
) -> list[Tally]:
    surface = HttpSurface(base_url, engine)
    fences = {w["fence"] for w in runs.values()}

    def check(case: tuple[str, str, bytes]) -> Verdict:
        path, secret, body = case
        headers = {"Content-Type": "application/json"}
        if secret:
            headers["Authorization"] = f"Bearer {secret}"
        # A refusal must change no row (HttpSurface compares): the run keeps waiting.
        verdict = surface.check(("POST", path, headers, _refusable(body, fences)))
        if verdict == "accepted":
            raise Finding("a reconcile answer with a wrong fence was taken")
        return verdict

    tally = Tally("reconcile answers (operator API)")
    with closing(surface):
        drive(tally, reconcile_cases(runs, tokens), check,
              cases=cases, seed_value=seed_value, trap=trap)  # fmt: skip
    return [tally]


# --- input answers ------------------------------------------------------------------------


def follow_ups(pool_size: int) -> st.SearchStrategy[tuple[int, str, dict[str, Any]]]:
    """(pool slot, binding, message without its taskId): the check fills the slot's task."""
    part = (
        st.fixed_dictionaries({"text": TEXT | st.sampled_from(["order 1042", "1042"])})
        | st.fixed_dictionaries({"data": JSON})
        | st.fixed_dictionaries({"url": st.just("https://x.invalid/f")})
        | JSON
    )
    text_part = st.fixed_dictionaries({"text": st.sampled_from(["order 1042", "1042"]) | TEXT})
    message = st.fixed_dictionaries(
        {
            "messageId": st.uuids().map(str) | st.sampled_from(["", "m-1", "x" * 300, "a\x00"]),
            "role": st.sampled_from(["ROLE_USER"] * 6 + ["ROLE_AGENT", "ROLE_UNSPECIFIED", "7"]),
            "parts": st.lists(text_part, min_size=1, max_size=2) | st.lists(part, max_size=3),
        },
        optional={
            "contextId": st.sampled_from(["", "ctx-other"]) | st.uuids().map(str),
            "metadata": JSON,
        },
    )
    return st.tuples(st.integers(0, pool_size - 1), st.sampled_from(["rpc", "rest"]), message)


def input_surface(
    base_url: str,
    engine: Engine,
    a2a_key: str,
    new_task: Callable[[], str],
    state_of: Callable[[str], str | None],
    cases: int,
    seed_value: int | None,
    trap: LogTrap,
    pool_size: int = 3,
) -> list[Tally]:
    """`new_task()` makes a task waiting for input and returns its id; `state_of(id)` is
    its state now."""
    pool = [new_task() for _ in range(pool_size)]
    surface = HttpSurface(base_url, engine)  # its baseline: the rows with the pool's tasks
    headers = {"Authorization": f"Bearer {a2a_key}", "A2A-Version": "1.0",
               "Content-Type": "application/json"}  # fmt: skip

    def check(case: tuple[int, str, dict[str, Any]]) -> Verdict:
        slot, binding, message = case
        params = {"message": {**message, "taskId": pool[slot]},
                  "configuration": {"returnImmediately": True}}  # fmt: skip
        if binding == "rpc":
            rpc = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": "SendMessage",
                   "params": params}  # fmt: skip
            request = ("POST", "/", headers, _encoded(rpc))
        else:
            request = ("POST", "/rest/message:send", headers, _encoded(params))
        verdict = surface.check(request)
        if state_of(pool[slot]) != "TASK_STATE_INPUT_REQUIRED":
            pool[slot] = new_task()  # answered (or ended): a fresh one waits in its place
            surface.rebase()
        return verdict

    tally = Tally("input answers (A2A follow-ups)")
    with closing(surface):
        drive(tally, follow_ups(pool_size), check, cases=cases, seed_value=seed_value, trap=trap)
    return [tally]


def _encoded(value: Any) -> bytes:
    """JSON as a client would send it; a lone surrogate goes as its escape."""
    return json.dumps(value, default=str).encode()
