"""A tool's failure in the worker's log (issue 40 item 4): one line with the exception's
type, its redacted message (the call's argument values masked; at privacy `metadata` and
`none` no message) and the tool's own frame; no traceback; never an argument or a secret.
At INFO, not WARNING: a tool failing is the tool's, not the runtime's fault. Unit tests of
the line, then real runs: a read tool and a non-idempotent write that raise
inside a library their code called, on a worker in this process, read through caplog."""

import json
import logging
from pathlib import Path

import pytest
from temporalio.client import Client

from agentrt import RunStatus, Settings, Toolbox, tool
from agentrt.activities.tool_failures import failure_text, masked_message, tool_frame
from agentrt.contracts.enums import ToolEffect
from tests._rules import new_queue, one_call, scripted_profile, scripted_worker

SECRET = "sk-live-0123456789abcdefghij"
ACCOUNT = "acct-secret-4417"


def _library_call(account: str) -> None:
    """Stands for a library the tool calls: json raises inside the standard library."""
    json.loads("{" + account)


def _raise_in_tool(account: str) -> BaseException:
    try:
        _library_call(account)
    except ValueError as inner:
        try:
            raise ConnectionError(
                f"account {account} refused with token {SECRET} at ops@example.com"
            ) from inner
        except ConnectionError as exc:
            return exc
    raise AssertionError("unreachable")


def test_the_line_names_type_masked_redacted_message_and_the_tools_frame() -> None:
    exc = _raise_in_tool(ACCOUNT)
    text = failure_text(exc, {"account": ACCOUNT, "n": 1}, "full")
    frame = tool_frame(exc)
    assert frame is not None and frame.startswith(f"{__name__}:")
    assert frame.endswith(" in _raise_in_tool")
    assert text == (
        f"ConnectionError: account [argument] refused with token [REDACTED] at *** (at {frame})"
    )


def test_the_frame_is_the_innermost_of_the_tools_package_not_a_librarys() -> None:
    try:
        _library_call("x")  # raises inside json (the standard library)
    except ValueError as exc:
        frame = tool_frame(exc)
    assert frame is not None and frame.endswith(" in _library_call")


@pytest.mark.parametrize("privacy", ["metadata", "none", "unknown-level"])
def test_below_redacted_only_the_type_and_the_frame(privacy: str) -> None:
    exc = _raise_in_tool(ACCOUNT)
    text = failure_text(exc, {"account": ACCOUNT}, privacy)
    assert text.startswith("ConnectionError (at ")
    assert "refused" not in text and ACCOUNT not in text


def test_a_message_is_one_bounded_line_and_nested_values_are_masked() -> None:
    exc = RuntimeError("line one\nline two " + "y" * 5000 + " order-991")
    message = masked_message(exc, {"items": [{"id": "order-991"}], "flag": True})
    assert "\n" not in message and "order-991" not in message
    assert len(message) <= 320


# --- real runs ------------------------------------------------------------------------


def _boxes(effect: ToolEffect) -> list[Toolbox]:
    @tool(effect=effect)
    def charge(account: str) -> str:
        """Charge an account."""
        json.loads("{" + account)  # the library raises inside itself; the tool lets it through
        return "charged"

    return [Toolbox("billing", [charge])]


def _failure_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "charge" in r.getMessage() and "failed" in r.getMessage()]


@pytest.mark.parametrize(
    ("effect", "privacy"),
    [
        (ToolEffect.READ_ONLY, "full"),
        (ToolEffect.READ_ONLY, "metadata"),
        (ToolEffect.NON_IDEMPOTENT_WRITE, "full"),
    ],
)
async def test_a_failing_tool_is_one_line_with_its_frame_at_info(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    effect: ToolEffect,
    privacy: str,
) -> None:
    rules = one_call("charge", "charge", {"account": ACCOUNT}, "Done.", "I only charge.")
    profile = scripted_profile(
        "biller", "Charge.", "billing", new_queue(), privacy=privacy, on_unknown_outcome="fail"
    )
    with caplog.at_level(logging.INFO):
        async with scripted_worker(client, settings, tmp_path, profile, _boxes(effect), rules) as w:
            view = await w.runtime.run(w.profile, "please charge")
    want = RunStatus.COMPLETED if effect is ToolEffect.READ_ONLY else RunStatus.FAILED
    assert view.status is want  # a read fails soft; a write's outcome is unknown
    [line] = _failure_lines(caplog)
    text = line.getMessage()
    assert line.levelno == logging.INFO and not line.exc_info  # INFO, no traceback
    assert f"{__name__}:" in text and " in charge)" in text  # the tool's frame
    assert "JSONDecodeError" in text and ACCOUNT not in text
    if privacy == "full":
        assert "Expecting property name enclosed in double quotes" in text
    else:
        assert "Expecting" not in text
    assert all(ACCOUNT not in r.getMessage() for r in caplog.records)
    # An expected failure leaves no traceback anywhere (the SDK logs a BENIGN one's without).
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []
