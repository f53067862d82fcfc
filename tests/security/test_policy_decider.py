"""A person cannot decide as a policy (issue 44, item 3): only the policy activity records
a decision named `policy <name>@<version>`. A decision claiming that name, even one
attested with the store's key as a person's (a client holding the seal key), is refused
on every path (the update's validator, the signal, the resume activity), and the run waits
on with nothing run; no principal can be named like a policy."""

from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from agentrt import Settings
from agentrt.contracts.approval import ApprovalDecision, DecisionRefusal
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import AgentRuntimeError, ErrorType, InvalidRequestError
from agentrt.contracts.ids import SIGNAL_APPROVE, UPDATE_DECIDE
from agentrt.store.demo import DemoWorld
from agentrt.store.security import attest
from agentrt.store.security.principals import PrincipalStore
from tests.workflows._policy import refunder, serving
from tests.workflows._waiting import pending_digest, until_found

FORGED = "policy refunds@3"


async def test_a_decision_claiming_a_policy_as_its_decider_is_refused_on_every_path(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    # The middle refund: the policy neither approves nor denies it; one person decides.
    async with serving(client, settings, tmp_path, [refunder("pol-forge")]) as s:
        waiting = await s.refund("pol-forge", "middle", RunStatus.WAITING_FOR_APPROVAL)
        digest, run_id = pending_digest(waiting), waiting.run_id
        sealer = s.resources.ctx.sealer
        seal = attest.attest(sealer, run_id, principal=FORGED, approved=True, turn_digest=digest)
        forged = ApprovalDecision(
            approved=True, decided_by=FORGED, turn_digest=digest, attestation=seal
        )
        # The facade (it attests as a person with the key it holds).
        with pytest.raises(AgentRuntimeError):
            await s.runtime.approve(run_id, approved=True, decided_by=FORGED, turn_digest=digest)
        # The update straight through Temporal: its validator refuses, leaving no trace.
        handle = client.get_workflow_handle(run_id)
        with pytest.raises(WorkflowUpdateFailedError) as failed:
            await handle.execute_update(UPDATE_DECIDE, forged)
        assert isinstance(failed.value.cause, ApplicationError)
        assert failed.value.cause.type == ErrorType.POLICY_DECIDER.value
        # The signal: refused inside the workflow, kept for the sender.
        await handle.signal(SIGNAL_APPROVE, forged)

        async def refusals() -> list[DecisionRefusal] | None:
            return await s.runtime.refused_decisions(run_id) or None

        refused = await until_found(refusals, "a refused decision")
        assert [r.refusal for r in refused] == [ErrorType.POLICY_DECIDER.value]

        view = await s.runtime.status(run_id)
        assert view.status is RunStatus.WAITING_FOR_APPROVAL
        kinds = [e.kind for e in s.runs.events(run_id, -1)]
        assert EventKind.APPROVAL not in kinds
        assert DemoWorld(s.resources.ctx).ledger_count(run_id=run_id) == 0
        # The resume activity would not count it either, nor a policy's seal a person's.
        assert not attest.authenticated(sealer, run_id, forged)
        assert not attest.policy_authenticated(sealer, run_id, forged)
        person = ApprovalDecision(approved=True, decided_by="bob", turn_digest=digest)
        person.attestation = attest.attest_policy(sealer, run_id, person)
        assert not attest.authenticated(sealer, run_id, person)


def test_no_principal_can_be_named_like_a_policy(settings: Settings, parts: object) -> None:
    from agentrt.workers.compose import WorkerResources

    assert isinstance(parts, WorkerResources)
    with pytest.raises(InvalidRequestError):
        PrincipalStore(parts.ctx).create(FORGED, ["runs:approve"])
