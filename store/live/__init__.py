"""Live output while a model call writes it: the table (`table`), the in-process wake
(`bell`) and the cross-process wake on SQLite (`wake`)."""
