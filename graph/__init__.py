"""How the steps connect: the research graph, the worker subgraph and the routes."""

from __future__ import annotations

from deep_research.graph.research import build_graph, graph

__all__ = ["build_graph", "graph"]
