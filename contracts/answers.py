"""What a person says to a run, as one typed union: an approval decision, a follow-up
message, an answer on an interrupted write (the three a waiting run takes: `PauseAnswer`),
or the resolution of an ended run's unknown write (`RunAnswer`, the four).

Each kind keeps its own model, its own attestation (store/security/attest.py seals each kind under
its own claim) and its own refusals; what they share is the path: one `answer` update on
the workflow (workflows/answers.py), one `POST /runs/{id}/answers` route shape
(api/operator/answers.py) and one `RuntimeClient.answer` (starter/client.py), of which
`approve`, `reconcile`, `resolve` and `submit_input` are thin wrappers. The `kind` field
tells them apart; a payload of an earlier client has none, and each model reads its own
kind by default."""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.reconcile_answer import ReconcileAnswer, WriteResolution

AnswerKind = Literal["decision", "input", "reconcile", "resolution"]

# What the `answer` update takes: a waiting run's answers.
PauseAnswer = Annotated[
    ApprovalDecision | InputMessage | ReconcileAnswer, Field(discriminator="kind")
]
# What `RuntimeClient.answer` takes: the three, and a resolution (an ended run's write:
# the store records it, no workflow is asked).
RunAnswer = Annotated[
    ApprovalDecision | InputMessage | ReconcileAnswer | WriteResolution,
    Field(discriminator="kind"),
]


class Answered(BaseModel):
    """The `answer` update's result: the answer is on record."""

    run_id: str
    kind: AnswerKind
