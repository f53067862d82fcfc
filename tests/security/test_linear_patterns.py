"""Issue 25, linear-time redaction: every redaction and guardrail pattern takes time linear
in the text, on inputs built to make a backtracking engine take quadratic or exponential
time, up to the API's body limit (1 MB); profile patterns RE2 cannot run in linear time
fail the profiles file at load; and a run's guardrails never hold the worker's event loop.

The timing bounds are generous (a loaded 2-core machine passes them by a wide margin);
the backtracking engine these tests replace missed them by one to three orders of
magnitude: 40k characters took 2.7 s on the e-mail pattern alone, 9 s on the credential
URL pattern, and 25 characters of `a` took seconds on a profile's `(a+)+$`."""

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from agentrt.activities.guardrails import Verdict, check
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.profiles import GuardrailConfig
from agentrt.contracts.redaction import EMAIL, SECRET_PATTERNS, has_secret, redact_text
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import build
from agentrt.workers.main import make_worker
from bench.fuzz_core import LogTrap
from bench.fuzz_limits import patterns_surface

BODY_LIMIT = 1_000_000  # AGENTRT_API_MAX_BODY_BYTES: no text reaches a worker longer

# Inputs built against backtracking: long runs a pattern's prefix accepts and its tail
# refuses, many near-matches, and many real matches (the substitution's own cost).
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "a@ repeated": lambda n: "a@" * (n // 2),
    "dots": lambda n: "." * n,
    "word characters, no @": lambda n: "a" * n,
    "a. repeated": lambda n: "a." * (n // 2),
    "@ then a. repeated": lambda n: "a@" + "a." * (n // 2),
    "scheme-like run": lambda n: "a://" + "b:" * (n // 2),
    "sk- repeated": lambda n: "sk-" * (n // 3),
    "eyJ- repeated": lambda n: "eyJ-" * (n // 4),
    "JWT-like dots": lambda n: "eyJaaaaa." * (n // 9),
    "Bearer repeated": lambda n: "Bearer " * (n // 7),
    "many e-mails": lambda n: "x@y.zz " * (n // 7),
    "many keys": lambda n: ("sk-" + "A" * 20 + " ") * (n // 24),
    "nested repetitions": lambda n: ("a" * 30 + "@" + "b." * 30 + "1 ") * (n // 93),
}
PATTERNS = {p.pattern: p for p in [*SECRET_PATTERNS, EMAIL]}


def _seconds(fn: Callable[[], object]) -> float:
    """The CPU time `fn` took in this thread (the patterns run in it): the work a pattern
    does on a text, which a machine busy with other processes does not inflate as it does
    the wall-clock time (the suite runs in parallel)."""
    started = time.thread_time()
    fn()
    return time.thread_time() - started


def _scan(pattern: Any, text: str) -> float:
    """The time of a search and a substitution of `pattern` over `text`."""
    return _seconds(lambda: (pattern.search(text), pattern.sub("X", text)))


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_each_redaction_pattern_takes_linear_time_on_adversarial_text(shape: str) -> None:
    make = ADVERSARIAL[shape]
    small, large = make(40_000), make(160_000)
    for source, pattern in PATTERNS.items():
        # 40k characters: a backtracking engine took seconds here (2.7 s on the e-mail
        # pattern, 9 s on the credential URL); a linear one takes milliseconds.
        first = _scan(pattern, small)
        assert first < 0.5, f"{source!r} on {shape}: {first:.2f}s for 40k characters"
        # Four times the text takes about four times as long, not sixteen.
        second = _scan(pattern, large)
        assert second < 8 * first + 0.5, f"{source!r} on {shape}: {first:.3f}s → {second:.3f}s"


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_redaction_of_a_body_limit_of_adversarial_text_takes_under_three_seconds(
    shape: str,
) -> None:
    text = ADVERSARIAL[shape](BODY_LIMIT)
    took = _seconds(lambda: (has_secret(text), redact_text(text, max_chars=None)))
    assert took < 3.0, f"{shape}: {took:.2f}s for {len(text)} characters"


def test_redaction_still_masks_what_it_masked_before() -> None:
    text = (
        "mail bob@example.com, key sk-" + "a" * 20 + " token Bearer abcdefghij "
        "url https://u:pw@host.example/x, jwt eyJabcde.fghijkl.mnopqrs "
        "aws AKIA" + "A" * 16 + " lone surrogate \ud800 kept"
    )
    out = redact_text(text, max_chars=None)
    assert "bob@example.com" not in out and "***" in out
    assert "sk-" not in out and "abcdefghij" not in out and "pw@" not in out
    assert "eyJabcde" not in out and "AKIA" not in out
    assert out.endswith("lone surrogate \ud800 kept")
    assert not has_secret("nothing to see here") and has_secret("x@y.zz")


def test_a_profile_pattern_that_backtracks_runs_in_linear_time() -> None:
    """`(a+)+$` is exponential in a backtracking engine: 25 characters took seconds."""
    rails = GuardrailConfig(input=[], deny_patterns=["(a+)+$"], approval_patterns=["(x|xx)+y"])
    took = _seconds(lambda: check("a" * 25 + "!", [], rails))
    assert took < 0.5, f"{took:.2f}s for 26 characters"
    text = "a" * BODY_LIMIT + "!"
    took = _seconds(lambda: check(text, [], rails))
    assert took < 1.0, f"{took:.2f}s for {len(text)} characters"
    assert check("aaa", [], rails).verdict is Verdict.DENY
    assert check("xxxy", [], rails).verdict is Verdict.REQUIRE_APPROVAL


@pytest.mark.parametrize(
    ("field", "pattern"),
    [
        ("deny_patterns", r"(a)\1"),  # a back-reference
        ("approval_patterns", r"(?=secret)s"),  # a look-ahead
        ("deny_patterns", r"(?<!x)y"),  # a look-behind
    ],
)
def test_a_profile_pattern_that_needs_backtracking_fails_the_profiles_file_at_load(
    tmp_path: Path, field: str, pattern: str
) -> None:
    path = tmp_path / "profiles.yaml"
    path.write_text(
        "profiles:\n"
        "  - name: p\n"
        "    model: scripted:demo\n"
        f"    guardrails: {{{field}: ['{pattern}']}}\n"
    )
    with pytest.raises(ConfigError) as err:
        load_profiles(path)
    message = str(err.value)
    assert "not a linear-time pattern" in message and field in message and "'p'" in message


# A prompt at the cap built against the old patterns: each of these runs took the
# backtracking engine over a second on its own, on the worker's event loop.
def _adversarial_prompt(cap: int) -> str:
    body = "hello " + "a" * 20_000 + " " + "a." * 8_000 + " " + "eyJ-" * 3_000 + " x@y.zz "
    return (body + " " * cap)[:cap]


# The scripted model echoes a prompt that starts "echo ": its reply, as long as the prompt,
# goes through the output guardrails too.
ECHO_RULES = """
rules:
  - name: echo
    match: {regex: '(?s)^echo (?P<all>.*)'}
    reply: {text: "{prompt.all}"}
"""


async def test_a_runs_guardrails_over_a_prompt_at_the_cap_never_hold_the_event_loop_100ms(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """A worker in this process runs a run whose prompt is at the cap and made of text the
    old patterns took seconds on, and whose model reply echoes it; a ticker on the same
    event loop records, for each gap between its 10 ms sleeps, the CPU time the loop's
    thread spent in it. Before, the input and output guardrails held the loop for seconds
    of its own CPU (and Temporal's own work with it); now they run in a thread, in linear
    time. CPU time of the loop's thread, not the wall clock: on a loaded CI machine the
    process is descheduled for 200 ms now and then, which holds nothing."""
    cap = 100_000  # the default AGENTRT_MAX_PROMPT_CHARS
    prompt = "echo " + _adversarial_prompt(cap - 5)
    assert len(prompt) == cap
    rules = tmp_path / "rules.yaml"
    rules.write_text(ECHO_RULES)
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    echoing = settings.replace(temporal={"task_queue": queue}, providers={"rules_file": rules})
    built = build(echoing)
    lags: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.thread_time()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.thread_time()
            lags.append(now - last)
            last = now

    try:
        async with make_worker(client, built, echoing):
            runtime = AgentRuntime(client, RunStore(built.ctx), queue)
            await runtime.run("auto", "warm up")  # imports and first-use costs, not measured
            ticking = asyncio.create_task(ticker())
            try:
                view = await asyncio.wait_for(runtime.run("guarded", prompt), 60)
            finally:
                stop.set()
                await ticking
    finally:
        built.close()
    assert view.status.terminal, view.status
    # The reply went through the output guardrail: its e-mail address is masked.
    assert view.answer is not None and len(view.answer) > cap // 2
    assert "x@y.zz" not in view.answer and "***" in view.answer
    assert len(lags) > 5
    assert max(lags) < 0.1, f"the event loop's thread worked {max(lags) * 1000:.0f} ms at once"


def test_fuzzed_texts_and_profile_patterns_stay_within_a_linear_time_bound() -> None:
    """A seeded slice of `python -m bench fuzz`'s patterns surface (bench/fuzz_limits.py)."""
    with LogTrap() as trap:
        [tally] = patterns_surface(40, None, trap)
    assert tally.cases == 40 and tally.accepted > 0 and tally.rejected > 0, tally
    assert tally.failures == [], tally.failures


SECRET_SAMPLES = [
    "nothing to see here",
    "https://user:pw@host.example/x",
    "HTTPS://USER:PW@HOST/x",
    "Authorization: bearer abcdefgh12345",
    "eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl",
    "key sk-proj-ABCDEFGHIJKLMNOPQRST",
    "SK-ABCDEFGHIJKLMNOPQRST",  # the key patterns are case-sensitive
    "ghp_" + "a" * 20,
    "AKIA" + "A" * 16,
    "akia" + "a" * 16,
    "AIza" + "b" * 30,
    "xoxb-1234567890",
    "mail x@y.zz now",
    "x@y.z",
]


@pytest.mark.parametrize("text", SECRET_SAMPLES)
def test_has_secret_is_any_of_the_patterns_in_one_scan(text: str) -> None:
    """has_secret scans once with every pattern as one alternation; it answers as asking
    each pattern in turn would."""
    each = any(p.search(text) for p in SECRET_PATTERNS) or EMAIL.search(text)
    assert has_secret(text) == each
    assert has_secret(f"padding {text} padding") == each
