"""A step's rows: written as one (`write`), a tool step's (`tools`), its event (`events`)
with its payload kept at the run's privacy level (`privacy`)."""
