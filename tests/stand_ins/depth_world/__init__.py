"""The depth benchmark's world (issue 36): planted facts on loopback pages, a search over them,
and a stand-in model kind to nobody.

- `facts`: what is planted where (the figures, their kinds and pages; every figure unique).
- `site` (with `prose`): the pages, built as real sites build them; `servers`: the site and a
  Tavily-compatible search over it.
- `brain`: the stand-in model, one handler per contract (`on_<Schema>`, `write_<kind>` for
  prose); `acting`: its tool calls as a worker; `reading`: how it reads a prompt.
- `score`: what a report did with the planted facts.

A new contract: add `on_<SchemaName>(self, call) -> dict` to `WorldBrain` (prose: a marker of
its instructions in `on_prose` and a `write_<kind>` method). A contract without a handler is
answered with `{}` and listed in `WorldBrain.unknown`, which the bench prints and the test
fails on. Helpers for new handlers: `reading.source_blocks` (numbered sources, with an ISO date
shown on or right after a source's line), `reading.entity_named` (a name itself, not a
namesake), `brain.rival` and `brain.same_quantity` (two figures of one quantity).
"""
