"""Benchmarks of the agent runtime: `python -m bench` (see bench/README.md)."""
