"""The compiled graph LangGraph's server serves: its state types survive the server's serializer.

With `LANGGRAPH_STRICT_MSGPACK=true` (LangGraph's announced default) a checkpoint may only hold
the types a graph allows; `compile()` collects them from the state schemas. But langgraph 1.2's
`Pregel.copy` drops that list (`__init__` resets `_serde_allowlist`), and the server (langgraph-api
0.16) runs a copy of the graph and ignores `allowed_msgpack_modules` in `langgraph.json`: our
`Settings`, `TaskPlan`, `Usage` came back as plain dicts and a resumed run failed. A
`ServedGraph` keeps the list in its copies.
"""

from __future__ import annotations

from typing import Any

from langgraph._internal import _serde
from langgraph.graph.state import CompiledStateGraph


class ServedGraph(CompiledStateGraph):
    """A compiled graph whose copies keep the msgpack allowlist of its state types."""

    def copy(self, update: dict[str, Any] | None = None) -> ServedGraph:
        """A copy, as the server makes one per run, with the allowlist of the original."""
        clone = super().copy(update)
        clone._serde_allowlist = self._serde_allowlist
        return clone


def schemas_of(graph: CompiledStateGraph) -> list[type]:
    """Every schema a compiled graph names: state, input, output, context and its nodes'."""
    builder = graph.builder
    schemas = [builder.state_schema, builder.input_schema, builder.output_schema]
    return schemas + [builder.context_schema] + [n.input_schema for n in builder.nodes.values()]


def for_the_server(graph: CompiledStateGraph) -> ServedGraph:
    """`graph` as a `ServedGraph`, allowing every type its schemas and its subgraphs' name
    (what `compile()` collects in strict mode, plus the workers' `Send` payloads, which the
    parent's checkpoint holds until a cancelled run is resumed)."""
    attributes = {key: value for key, value in vars(graph).items() if key != "__orig_class__"}
    served = ServedGraph(**attributes)
    schemas = schemas_of(graph)
    channels = dict(graph.builder.channels)
    for _, subgraph in graph.get_subgraphs(recurse=True):
        schemas += schemas_of(subgraph)
        channels.update(subgraph.builder.channels)
    served._serde_allowlist = _serde.build_serde_allowlist(schemas=schemas, channels=channels)
    return served
