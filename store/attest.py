"""Which decisions an authenticated principal made. The operator API seals (principal,
verdict, digest) under the store's key and sends it with the decision; the store opens it
when it records the decision. Anyone who can only reach Temporal (Temporal Web, the stock
CLI) cannot produce one, so their decider is recorded as unauthenticated."""

import json

from agentrt.contracts.approval import ApprovalDecision
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
