"""sealed push URLs: a2a_push_config.url sealed (AES-256-GCM), the rows that exist too

A webhook's URL is as often as not a credential (a secret path, `?token=`); before this
revision it was stored in the clear beside its sealed token and credentials. This revision
seals the URLs already stored, in place, in batches, with the installation's seal key, as
0008 did for event payloads (the sealer the store was opened with, else the settings'). The
binding (table, column, `task_id/id`) is written out here as store/security/sealed.py has it today.
"""

from agentrt.store.migrations._rows import reseal

revision, down_revision = "0016", "0015"
branch_labels = depends_on = None


def upgrade() -> None:
    reseal("a2a_push_config", "url", order=("task_id", "id"), row=("task_id", "id"), seal=True)


def downgrade() -> None:
    reseal("a2a_push_config", "url", order=("task_id", "id"), row=("task_id", "id"), seal=False)
