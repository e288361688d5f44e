"""The worker subgraph: observe → orient → decide → act → observe ..., then report_findings."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from deep_research.graph.routes import route_after_act, route_after_decide
from deep_research.graph.settings_guard import SettingsReader, validated
from deep_research.graph.sync_bridge import node, route
from deep_research.nodes.worker_steps import act, decide, observe, orient, report_findings
from deep_research.state import WorkerInput, WorkerOutput, WorkerState
from deep_research.tools.run_resources import LiveRuns


def build_worker_graph(runs: LiveRuns, read: SettingsReader = validated) -> CompiledStateGraph:
    """One compiled worker; the research graph adds it under a node name per round kind.
    Its steps are handed `runs`, the research graph's live runs, and read the settings they
    were sent through `read` (the research graph's: guarded for remote callers)."""
    builder = StateGraph(WorkerState, input_schema=WorkerInput, output_schema=WorkerOutput)
    builder.add_node("observe", node(observe, runs, read=read))
    builder.add_node("orient", node(orient, runs, read=read))
    builder.add_node("decide", node(decide, runs, read=read))
    builder.add_node("act", node(act, runs, read=read))
    builder.add_node("report_findings", node(report_findings, runs, read=read))
    builder.add_edge(START, "observe")
    builder.add_edge("observe", "orient")
    builder.add_edge("orient", "decide")
    builder.add_conditional_edges("decide", route(route_after_decide))
    builder.add_conditional_edges("act", route(route_after_act))
    builder.add_edge("report_findings", END)
    return builder.compile(name="worker")
