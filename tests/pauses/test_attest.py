"""Decision attestations: only the operator API's seal of exactly this decision counts as
authenticated; anything else is recorded as an unauthenticated decider."""

from agentrt.contracts.approval import ApprovalDecision
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.attest import attest, audit, authenticated
from tests.conftest import TEST_SEAL_KEYS

RUN, OTHER = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"


def _decision(seal: str | None, *, by: str = "bob", approved: bool = True) -> ApprovalDecision:
    return ApprovalDecision(
        approved=approved, decided_by=by, turn_digest="d" * 64, attestation=seal
    )


def test_only_the_seal_of_this_very_decision_authenticates() -> None:
    sealer = Sealer.from_b64(TEST_SEAL_KEYS)
    seal = attest(sealer, RUN, principal="bob", approved=True, turn_digest="d" * 64)
    assert authenticated(sealer, RUN, _decision(seal))
    assert audit(sealer, RUN, _decision(seal)) == {
        "approved": True, "decided_by": "bob", "authenticated": True, "turn_digest": "d" * 64,
    }  # fmt: skip
    assert not authenticated(sealer, OTHER, _decision(seal))  # copied to another run
    assert not authenticated(sealer, RUN, _decision(seal, by="mallory"))  # another name
    assert not authenticated(sealer, RUN, _decision(seal, approved=False))  # flipped
    assert not authenticated(sealer, RUN, _decision("v1.test.AAAA"))  # forged
    assert not authenticated(sealer, RUN, _decision("junk"))
    other_key = Sealer.from_b64("other:" + "b" * 43 + "=")
    assert not authenticated(other_key, RUN, _decision(seal))
    denied = ApprovalDecision(approved=False, decided_by="bob", turn_digest="d" * 64,
                              reason="over the limit")  # fmt: skip
    assert audit(sealer, RUN, denied)["reason"] == "over the limit"  # the decider's why
    unauth = audit(sealer, RUN, _decision(None))
    assert unauth["decided_by"] == "unauthenticated:bob" and unauth["authenticated"] is False
