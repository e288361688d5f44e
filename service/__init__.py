"""The run service: one home for a run's life, below the doors (the terminal, the MCP server,
the web app) and above the graph.

`runs.open_service(target, admission.Operator(...))` gives a `runs.RunService`: admission
(one list of checks before any paid call, the operator's ceilings, server-only settings from
the executing process), start, events (replayed from an id, or followed), read and list (the
index of runs), stop, resume, decide, delete, follow-up, each checked against the caller
(`caller.Caller`: door and user); runs go to `executors.InProcess` or, with `queue=True`, to
`deep-research worker` processes (`queue`). docs/architecture.md, "The run service and its
doors". Kept light: `--help` imports nothing heavy through it.
"""
