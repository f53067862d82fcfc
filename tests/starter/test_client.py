"""Issue 26: the two clients, in process (`AgentRuntime`) and over HTTP (`ApiRuntime`),
are one `RuntimeClient` (their common base). mypy checks that overrides conform (the CLI
hands either to `Commands.runtime: RuntimeClient`); this checks the stricter promise that
neither has a public method of the base with other names, kinds, defaults or types (mypy
allows extras)."""

import inspect

import httpx
import pytest

import agentrt
from agentrt.contracts.errors import InvalidRequestError, PromptTooLongError
from agentrt.contracts.start import StartRequest
from agentrt.starter.client import RuntimeClient
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.remote import ApiRuntime

METHODS = sorted(
    name
    for name, value in vars(RuntimeClient).items()
    if inspect.iscoroutinefunction(value) and not name.startswith("_")
)


def _params(cls: type, method: str) -> list[tuple[str, object, object, object]]:
    signature = inspect.signature(getattr(cls, method), eval_str=True)
    return [
        (p.name, p.kind, p.default, p.annotation)
        for p in signature.parameters.values()
        # A client may add keyword-only options of its own (the facade's a2a_task_id on submit).
        if p.kind is not p.KEYWORD_ONLY or p.name in _protocol_names(method)
    ] + [("return", None, None, signature.return_annotation)]


def _protocol_names(method: str) -> set[str]:
    return set(inspect.signature(getattr(RuntimeClient, method)).parameters)


@pytest.mark.parametrize("client", [AgentRuntime, ApiRuntime])
def test_each_client_has_every_protocol_method_with_the_same_signature(client: type) -> None:
    assert METHODS == [
        "answer", "approve", "attention", "budget", "cancel", "events", "inbox", "reconcile",
        "resolve",
        "result",
        "start", "status", "submit",
    ]  # fmt: skip
    for method in METHODS:
        assert _params(client, method) == _params(RuntimeClient, method), method


def test_the_protocol_and_the_start_request_are_public() -> None:
    assert agentrt.RuntimeClient is RuntimeClient and "RuntimeClient" in agentrt.__all__
    assert agentrt.StartRequest is StartRequest and "StartRequest" in agentrt.__all__


def test_a_start_request_has_one_bound_and_refuses_typed() -> None:
    ok = StartRequest.checked(10, {"profile": "p", "prompt": "hi", "max_iterations": 20})
    assert ok.max_iterations == 20 and ok.run_id is None
    for fields, says in (
        ({"profile": "p", "prompt": "hi", "max_iterations": 21}, "between 1 and 20"),
        ({"profile": "p", "prompt": "hi", "max_iterations": 0}, "between 1 and 20"),
        ({"profile": " ", "prompt": "hi"}, "profile is required"),
        ({"profile": "p", "prompt": " "}, "prompt is empty"),
        ({"profile": "p", "prompt": "hi", "run_id": "x"}, "is not a uuid"),
        ({"profile": "p", "prompt": "hi", "initiator": "x"}, "unknown field initiator; known"),
        ({"profile": "p", "promt": "hi"}, r"unknown field promt \(did you mean prompt\?\)"),
    ):
        with pytest.raises(InvalidRequestError, match=says):
            StartRequest.checked(10, fields)
    with pytest.raises(PromptTooLongError, match="11 characters, over the cap of 10"):
        StartRequest.checked(10, {"profile": "p", "prompt": "x" * 11})
    run = ok.run_request("00000000-0000-4000-8000-000000000000", "erin", "task-1")
    assert (run.profile, run.prompt, run.max_iterations) == ("p", "hi", 20)
    assert (run.initiator, run.a2a_task_id) == ("erin", "task-1")


async def test_through_the_api_a_start_naming_an_initiator_is_refused_before_sending() -> None:
    """The token's principal starts the run; nothing listens at the URL, so a request that
    was sent would fail with another error."""
    request = StartRequest.checked(10, {"profile": "p", "prompt": "hi"})
    async with httpx.AsyncClient(base_url="http://127.0.0.1:9") as http:
        with pytest.raises(InvalidRequestError, match="token's principal starts the run"):
            await ApiRuntime(http).submit(request, initiator="mallory")
