"""Issue 26: each typed error's wire code is written once, on its class. The operator API
answers with it and the HTTP client raises the same class from it."""

from agentrt.api.operator import errors as api_errors
from agentrt.contracts import errors
from agentrt.contracts.errors import AgentRuntimeError, by_code


def _classes() -> list[type[AgentRuntimeError]]:
    return [
        v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, AgentRuntimeError)
    ]


def test_every_error_class_has_its_own_code_and_comes_back_from_it() -> None:
    classes = _classes()
    assert len(classes) == len({c.code for c in classes}) >= 19
    for cls in classes:
        assert "code" in vars(cls), cls  # its own, not its parent's
        assert by_code(cls.code) is cls


def test_a_code_no_class_has_is_the_base_class() -> None:
    assert by_code("profile_not_granted") is AgentRuntimeError
    assert by_code("") is AgentRuntimeError


def test_every_status_the_api_maps_is_a_class_code() -> None:
    codes = {c.code for c in _classes()}
    assert set(api_errors._STATUS) <= codes
