"""The database itself: the engine and its sessions (`engine`), opening a store and bringing
its schema to head (`open`, `migrate`; the scripts are in store/migrations), the tables
(`tables`, and the A2A role's in `a2a_tables`), what every store module shares (`context`)
and the sealing of stored values (`sealing`)."""
