"""The run service: one home for a run's life, below the doors (cli, server, web) and above the
graph. Admission, start, events, stop, resume, delete, follow-up, listing and reading, owned by
the caller that started the run; in-process and queue executors (docs/architecture.md)."""
