"""The iteration ceiling at the client edges (issue 30): 20 unless the installation raises
it (AGENTRT_MAX_ITERATIONS_CEILING), the same bound for the Python API and the CLI, and a
refusal past it that names the setting."""

import argparse

import pytest

from agentrt.contracts.errors import InvalidRequestError
from agentrt.contracts.start import StartRequest
from agentrt.core.settings import Settings
from agentrt.starter.commands import start_arg

FIELDS = {"profile": "p", "prompt": "hi"}


def test_the_default_ceiling_is_20_and_its_refusal_names_the_setting() -> None:
    assert StartRequest.checked(10, {**FIELDS, "max_iterations": 20}).max_iterations == 20
    with pytest.raises(InvalidRequestError, match="AGENTRT_MAX_ITERATIONS_CEILING"):
        StartRequest.checked(10, {**FIELDS, "max_iterations": 21})


def test_a_raised_ceiling_lets_a_start_ask_for_more_and_no_more() -> None:
    ok = StartRequest.checked(10, {**FIELDS, "max_iterations": 100}, max_iterations_ceiling=100)
    assert ok.max_iterations == 100
    with pytest.raises(InvalidRequestError, match="between 1 and 100, got 101"):
        StartRequest.checked(10, {**FIELDS, "max_iterations": 101}, max_iterations_ceiling=100)


@pytest.mark.parametrize(("ceiling", "asked", "ok"), [(20, 21, False), (50, 50, True)])
def test_the_cli_takes_the_installations_ceiling(ceiling: int, asked: int, ok: bool) -> None:
    settings = Settings().replace(limits={"max_iterations_ceiling": ceiling})
    args = argparse.Namespace(profile="p", prompt="hi", max_iterations=asked)
    if ok:
        assert start_arg(args, settings).max_iterations == asked
    else:
        with pytest.raises(InvalidRequestError, match="AGENTRT_MAX_ITERATIONS_CEILING"):
            start_arg(args, settings)


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRT_MAX_ITERATIONS_CEILING", "200")
    monkeypatch.setenv("AGENTRT_SEGMENT_ROUNDS", "25")
    limits = Settings().limits
    assert (limits.max_iterations_ceiling, limits.segment_rounds) == (200, 25)
    monkeypatch.setenv("AGENTRT_MAX_ITERATIONS_CEILING", "10001")
    with pytest.raises(ValueError, match="max_iterations_ceiling"):
        Settings()
