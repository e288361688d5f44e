"""How the steps connect: the research graph, the worker subgraph, the routes and stop rules.

`from graph import graph, build_graph` loads the graph on first use, so that modules under
`nodes/` may import the routes without importing the graph that imports them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_graph", "graph"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from graph import research

        return getattr(research, name)
    raise AttributeError(f"module 'graph' has no attribute {name!r}")
