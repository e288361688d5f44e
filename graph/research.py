"""The research graph: plan, fan out workers, write, review, and fill gaps until a stop rule."""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graph.routes import (
    dispatch_supplementary,
    route_after_approval,
    route_after_plan,
    route_after_quality,
    route_after_synthesis,
)
from graph.sync_bridge import node
from graph.worker import build_worker_graph
from nodes.approval import approve_plan
from nodes.planning import decompose, decompose_for_remote_callers
from nodes.reviewing import analyze_gaps, quality_check
from nodes.verifying import verify_citations
from nodes.writing import finalize, refine_report, synthesize
from settings import Settings
from state import ResearchInput, ResearchOutput, ResearchState


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None, *, remote_callers: bool = False
) -> CompiledStateGraph:
    """A fresh compiled research graph; pass a checkpointer to make runs resumable.

    With `remote_callers`, the settings a caller passes cannot switch a security guard off
    (`fetch_private_addresses`): only the server's own environment can.
    """
    builder = StateGraph(
        ResearchState,
        context_schema=Settings,
        input_schema=ResearchInput,
        output_schema=ResearchOutput,
    )
    worker = build_worker_graph()
    builder.add_node(
        "decompose", node(decompose_for_remote_callers if remote_callers else decompose)
    )
    builder.add_node("approve_plan", node(approve_plan))
    builder.add_node("research", worker)
    builder.add_node("synthesize", node(synthesize))
    builder.add_node("quality_check", node(quality_check))
    builder.add_node("analyze_gaps", node(analyze_gaps))
    builder.add_node("supplementary_research", worker)
    builder.add_node("refine_report", node(refine_report))
    builder.add_node("verify_citations", node(verify_citations))
    builder.add_node("finalize", node(finalize))

    builder.add_edge(START, "decompose")
    builder.add_conditional_edges("decompose", route_after_plan, ["approve_plan", "research"])
    builder.add_conditional_edges("approve_plan", route_after_approval, ["research", "finalize"])
    builder.add_edge("research", "synthesize")
    builder.add_conditional_edges("synthesize", route_after_synthesis)
    builder.add_conditional_edges("quality_check", route_after_quality)
    builder.add_conditional_edges(
        "analyze_gaps",
        dispatch_supplementary,
        ["supplementary_research", "verify_citations", "finalize"],
    )
    builder.add_edge("supplementary_research", "refine_report")
    builder.add_edge("refine_report", "quality_check")
    builder.add_edge("verify_citations", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(checkpointer=checkpointer, name="deep_research")


graph = build_graph()
"""Compiled without a checkpointer, for Python callers."""
served = build_graph(remote_callers=True)
"""What `langgraph.json` serves (`langgraph dev` has its own checkpointer): its API callers'
settings cannot switch a security guard off."""
