"""The user tools built on the runtime: the CLI and what its commands use (sizing, plan
views, benchmark, drift, the offline-plan optimizer, the model writer). Tools import the
runtime; the runtime never imports tools."""
