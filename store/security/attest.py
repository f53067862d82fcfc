"""Which decisions, answers and inputs an authenticated principal made. The operator API (or
a client holding the seal key, e.g. `AgentRuntime.approve`) seals (run, principal, verdict,
digest) under the store's key and sends it with the decision; the resume activity opens it
before the decision counts. Anyone who can only reach Temporal (Temporal Web, the stock CLI)
cannot produce one: their decision is refused (a DECISION_REFUSED event), or, where a
profile has `unattested_decisions: allow`, recorded with its decider labelled
unauthenticated. A person's answer on an interrupted write and a follow-up message are
attested likewise (a MAC of who said what on which run) and count only attested, whatever
the profile says. The workflow never sees the key: it acts on the activity's verdict."""

import hmac
import json
from typing import Protocol

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.policy import is_policy_decider
from agentrt.contracts.reconcile_answer import ReconcileAnswer, WriteResolution
from agentrt.store.db.sealing import Sealer, SealError

UNAUTHENTICATED = "unauthenticated:"
_WHERE = {"table": "approval", "column": "attestation"}


def _claim(run_id: str, principal: str, approved: bool, turn_digest: str) -> str:
    body = {"run": run_id, "by": principal, "approved": approved, "digest": turn_digest}
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def attest(sealer: Sealer, run_id: str, *, principal: str, approved: bool, turn_digest: str) -> str:
    return sealer.seal(_claim(run_id, principal, approved, turn_digest), row=run_id, **_WHERE)


def authenticated(sealer: Sealer, run_id: str, decision: ApprovalDecision) -> bool:
    """True only if the decision carries an attestation of exactly this decision. A decider
    named as a policy never counts here: a policy's decision is recorded by the policy
    activity itself (`attest_policy`), never through a person's path."""
    if not decision.attestation or is_policy_decider(decision.decided_by):
        return False
    try:
        opened = sealer.open(decision.attestation, row=run_id, **_WHERE)
    except (SealError, ValueError):  # forged, truncated or for another run
        return False
    expected = _claim(run_id, decision.decided_by, decision.approved, decision.turn_digest)
    return opened == expected


def audit(sealer: Sealer, run_id: str, decision: ApprovalDecision) -> dict[str, object]:
    """The APPROVAL event's payload: who decided (labelled when unauthenticated), what, and
    why (the decider's reason: required to deny, optional to approve)."""
    ok = authenticated(sealer, run_id, decision)
    return {
        "approved": decision.approved,
        "decided_by": decision.decided_by if ok else UNAUTHENTICATED + decision.decided_by,
        "authenticated": ok,
        "turn_digest": decision.turn_digest,
        **({"reason": decision.reason} if decision.reason else {}),
    }


def refusal(decision: ApprovalDecision) -> dict[str, object]:
    """The DECISION_REFUSED event's payload: what was refused, its decider labelled."""
    return {
        "refusal": ErrorType.UNATTESTED_DECISION.value,
        "approved": decision.approved,
        "decided_by": UNAUTHENTICATED + decision.decided_by,
        "attestation": "invalid" if decision.attestation else "missing",
        "turn_digest": decision.turn_digest,
    }


def attest_policy(sealer: Sealer, run_id: str, decision: ApprovalDecision) -> str:
    """A policy's decision: a MAC under the seal key of the policy claim (its own kind: a
    person's attestation never passes for a policy's, nor a policy's for a person's)."""
    claim = _claim(run_id, decision.decided_by, decision.approved, decision.turn_digest)
    return sealer.mac(f"policy\x1f{claim}")


def policy_authenticated(sealer: Sealer, run_id: str, decision: ApprovalDecision) -> bool:
    if not decision.attestation or not is_policy_decider(decision.decided_by):
        return False
    expected = attest_policy(sealer, run_id, decision)
    return hmac.compare_digest(decision.attestation.encode(), expected.encode())


class Claimed(Protocol):
    """A statement attested by a MAC of its claim: an answer, a follow-up, a resolution."""

    attestation: str | None

    def claim(self, run_id: str) -> str: ...


def _attest(sealer: Sealer, kind: str, run_id: str, said: Claimed) -> str:
    """A MAC, under the seal key, of the statement's claim, prefixed by its kind (an
    answer's attestation never passes for a resolution's)."""
    return sealer.mac(f"{kind}\x1f{said.claim(run_id)}")


def _opens(sealer: Sealer, kind: str, run_id: str, said: Claimed) -> bool:
    if not said.attestation:
        return False
    expected = _attest(sealer, kind, run_id, said)
    return hmac.compare_digest(said.attestation.encode(), expected.encode())


def attest_answer(sealer: Sealer, run_id: str, answer: ReconcileAnswer) -> str:
    """A person's answer on an interrupted write: who answered what on which fence."""
    return _attest(sealer, "reconcile", run_id, answer)


def answer_authenticated(sealer: Sealer, run_id: str, answer: ReconcileAnswer) -> bool:
    return _opens(sealer, "reconcile", run_id, answer)


def attest_input(sealer: Sealer, run_id: str, message: InputMessage) -> str:
    """A follow-up message: who sent which text as which message. The A2A API makes it for
    the task's owner."""
    return _attest(sealer, "input", run_id, message)


def input_authenticated(sealer: Sealer, run_id: str, message: InputMessage) -> bool:
    return _opens(sealer, "input", run_id, message)


def input_refusal(message: InputMessage) -> dict[str, object]:
    """The INPUT_REFUSED event's payload: which message was refused and why, its sender
    labelled (never its text: it counts for nothing)."""
    return {
        "refusal": ErrorType.UNATTESTED_INPUT.value,
        "message_id": message.message_id,
        "sent_by": UNAUTHENTICATED + message.sent_by,
        "attestation": "invalid" if message.attestation else "missing",
    }


def attest_resolution(sealer: Sealer, run_id: str, resolution: WriteResolution) -> str:
    """An operator's resolution of an ended run's unknown write: who said which outcome,
    with which note, on which fence."""
    return _attest(sealer, "resolve", run_id, resolution)


def resolution_authenticated(sealer: Sealer, run_id: str, resolution: WriteResolution) -> bool:
    return _opens(sealer, "resolve", run_id, resolution)


def attest_statement(
    sealer: Sealer,
    run_id: str,
    said: ApprovalDecision | InputMessage | ReconcileAnswer | WriteResolution,
) -> str:
    """The attestation of any answer a person gives a run, each kind under its own claim
    and its own seal (one kind's never passes for another's): the one entry a client
    holding the seal key attests by (`RuntimeClient.answer`)."""
    match said:
        case ApprovalDecision():
            return attest(
                sealer, run_id, principal=said.decided_by, approved=said.approved,
                turn_digest=said.turn_digest,
            )  # fmt: skip
        case InputMessage():
            return attest_input(sealer, run_id, said)
        case ReconcileAnswer():
            return attest_answer(sealer, run_id, said)
        case WriteResolution():
            return attest_resolution(sealer, run_id, said)
