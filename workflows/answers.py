"""The one update path every answer a waiting run takes comes by: a decision on a suspended
turn, a follow-up message, an answer on an interrupted write (contracts/answers.py
`PauseAnswer`). The `answer` update takes any of them; the `decide`, `submit_input` and
`reconcile` updates (frozen: older clients and recorded histories use them) are adapters
onto it, each naming the gate it expects. One validator and one handler, for every kind:

- the validator asks the answer's gate (workflows/gate.py) and refuses, leaving no trace in
  history, what the gate would not take;
- the handler has the gate take the answer, waits until the answer is on record, refused
  by the recording activity (its attestation does not open), or the run ended, and says so.

The wait that consumes the answer (records it, moves the run) is the pause's own:
workflows/pauses.py and workflows/reconciliation.py."""

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from agentrt.workflows._context import RunContext
from agentrt.workflows.gate import Gate, Refused

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.a2a import InputMessage
    from agentrt.contracts.answers import PauseAnswer
    from agentrt.contracts.approval import ApprovalDecision
    from agentrt.contracts.errors import ErrorType
    from agentrt.contracts.reconcile_answer import ReconcileAnswer

_NOT_AN_ANSWER = Refused(
    ErrorType.INVALID_REQUEST.value, "answer refused: the payload is not an answer"
)


def gate_of(ctx: RunContext, given: object) -> "Gate[Any] | None":
    """The gate that takes `given`, by its kind; None for what is no answer (a JSON null
    arrives as None)."""
    match given:
        case ApprovalDecision():
            return ctx.gate
        case InputMessage():
            return ctx.input
        case ReconcileAnswer():
            return ctx.reconcile
    return None


def check(ctx: RunContext, given: object, expected: "Gate[Any] | None" = None) -> None:
    """The validator: a refused answer leaves no trace in history. `expected`: the gate a
    legacy update feeds (a payload of another kind is refused as not its kind)."""
    gate = gate_of(ctx, given)
    if gate is None or (expected is not None and gate is not expected):
        raise _error(_not_a(expected) if expected is not None else _NOT_AN_ANSWER)
    refused = gate.refused(given)
    if refused is not None:
        raise _error(refused)


async def answer(ctx: RunContext, given: PauseAnswer) -> PauseAnswer:
    """The handler: returns `given` once it is on record; fails typed when the gate does not
    take it, the recording activity refused it, or the run ended before it counted."""
    gate = gate_of(ctx, given)
    if gate is None:
        raise _error(_NOT_AN_ANSWER)
    if not gate.take(given):
        raise _error(gate.take_refused(given))
    await workflow.wait_condition(lambda: gate.settled(given) or ctx.finished)
    refused = gate.outcome(given)
    if refused is not None:
        raise _error(refused)
    return given


def _not_a(gate: "Gate[Any]") -> Refused:
    return Refused(
        ErrorType.INVALID_REQUEST.value,
        f"{gate.noun} refused: the payload is not {gate.payload}",
    )


def _error(refused: Refused) -> ApplicationError:
    return ApplicationError(refused.message, type=refused.type)
