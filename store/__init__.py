"""The store: every table of the runtime and the SQL that reads and writes it, grouped by
what each part owns.

- `db`: the database itself (engine, opening, migrations, the tables, the shared context);
- `runs`: a run's row, its record and its views;
- `steps`: the rows of a model or tool step, its event among them;
- `live`: live output and the wakes of its followers;
- `security`: sealing, attestations, tokens and sign-in sessions;
- `a2a`: the A2A server role's tables;
- `ops`: the metrics' gauges, the retention pass, the workers' profile registrations;
- `demo`: the world the demo tools act on.

The scripts of the schema are in store/migrations (alembic.ini, `db.migrate`)."""
