"""sealed events: every agent_event.payload sealed (AES-256-GCM), the rows that exist too

Before this revision the run's event payloads were plain JSON at privacy `full` and
`redacted`: the prompt, the model's text, tool arguments and results, the answer and
provider error text, beside the same content sealed in agent_message, tool_result and
agent_run.answer. This revision seals the payloads already stored, in place, in batches,
with the installation's seal key: the sealer the store was opened with (store.db.migrate hands
it in), else the one the settings name (AGENTRT_SEAL_KEYS, or the key file under
AGENTRT_DATA_DIR, as `alembic upgrade head` run by hand has it). An empty table needs no key.
The binding (table, column, `run_id/sequence`) is written out here, as store/security/sealed.py
has it today, so this revision keeps sealing what it sealed whatever that file becomes.
"""

from agentrt.store.migrations._rows import reseal

revision, down_revision = "0008", "0007"
branch_labels = depends_on = None


def upgrade() -> None:
    reseal("agent_event", "payload", order=("id",), row=("run_id", "sequence"), seal=True)


def downgrade() -> None:
    reseal("agent_event", "payload", order=("id",), row=("run_id", "sequence"), seal=False)
