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

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.reconcile_answer import ReconcileAnswer, WriteResolution
from agentrt.store.sealing import Sealer, SealError

UNAUTHENTICATED = "unauthenticated:"
_WHERE = {"table": "approval", "column": "attestation"}


def _claim(run_id: str, principal: str, approved: bool, turn_digest: str) -> str:
    body = {"run": run_id, "by": principal, "approved": approved, "digest": turn_digest}
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def attest(sealer: Sealer, run_id: str, *, principal: str, approved: bool, turn_digest: str) -> str:
    return sealer.seal(_claim(run_id, principal, approved, turn_digest), row=run_id, **_WHERE)


def authenticated(sealer: Sealer, run_id: str, decision: ApprovalDecision) -> bool:
    """True only if the decision carries an attestation of exactly this decision."""
    if not decision.attestation:
        return False
    try:
        opened = sealer.open(decision.attestation, row=run_id, **_WHERE)
    except (SealError, ValueError):  # forged, truncated or for another run
        return False
    expected = _claim(run_id, decision.decided_by, decision.approved, decision.turn_digest)
    return opened == expected


def audit(sealer: Sealer, run_id: str, decision: ApprovalDecision) -> dict[str, object]:
    """The APPROVAL event's payload: who decided (labelled when unauthenticated), and what."""
    ok = authenticated(sealer, run_id, decision)
    return {
        "approved": decision.approved,
        "decided_by": decision.decided_by if ok else UNAUTHENTICATED + decision.decided_by,
        "authenticated": ok,
        "turn_digest": decision.turn_digest,
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


def attest_answer(sealer: Sealer, run_id: str, answer: ReconcileAnswer) -> str:
    """The attestation of a person's answer on an interrupted write: a MAC, under the seal
    key, of who answered what on which fence of which run."""
    return sealer.mac("reconcile\x1f" + answer.claim(run_id))


def answer_authenticated(sealer: Sealer, run_id: str, answer: ReconcileAnswer) -> bool:
    if not answer.attestation:
        return False
    expected = attest_answer(sealer, run_id, answer)
    return hmac.compare_digest(answer.attestation.encode(), expected.encode())


def attest_input(sealer: Sealer, run_id: str, message: InputMessage) -> str:
    """The attestation of a follow-up message: a MAC, under the seal key, of who sent which
    text as which message to which run. The A2A API makes it for the task's owner."""
    return sealer.mac("input\x1f" + message.claim(run_id))


def input_authenticated(sealer: Sealer, run_id: str, message: InputMessage) -> bool:
    if not message.attestation:
        return False
    expected = attest_input(sealer, run_id, message)
    return hmac.compare_digest(message.attestation.encode(), expected.encode())


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
    """The attestation of an operator's resolution of an ended run's unknown write."""
    return sealer.mac("resolve\x1f" + resolution.claim(run_id))


def resolution_authenticated(sealer: Sealer, run_id: str, resolution: WriteResolution) -> bool:
    if not resolution.attestation:
        return False
    expected = attest_resolution(sealer, run_id, resolution)
    return hmac.compare_digest(resolution.attestation.encode(), expected.encode())
