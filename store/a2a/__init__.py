"""The A2A server role's store, as the API process uses it: the pure ProtoJSON builders and
run-status mapping (`view`), the task view's creation, reads and follow-ups (`tasks`), the
journal's append and reads (`journal`), push configs and their delivery record (`push`),
and the purge (`purge`). What the worker writes (the projection and the run's result) is in
activities/a2a.py; the role's tables are with the others, in store/db/a2a_tables.py."""
