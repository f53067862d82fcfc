"""An agentrt plug-in package: see README.md."""
