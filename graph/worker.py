"""The worker subgraph: observe → orient → decide → act → observe ..., then report_findings."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from deep_research.graph.routes import route_after_act, route_after_decide
from deep_research.graph.settings_guard import SettingsReader, validated
from deep_research.graph.sync_bridge import node, route
from deep_research.nodes.worker_steps import act, decide, observe, orient, report_findings
from deep_research.state import WorkerInput, WorkerOutput, WorkerState, add_usage
from deep_research.tools.run_resources import LiveRuns


async def report_upward(state: WorkerState, *, runs: LiveRuns) -> Command:
    """`report_findings`, its output written straight into the research graph's state: what
    the worker's output would be (its result, all it spent), never kept in the worker's own
    state, whose last write stored each result a second time (the orchestrator's is the one
    read). Before the orchestrator has it the worker's last step is simply not done: a resume
    runs it again, its model call answered from the checkpoint (`tools.durable_calls`)."""
    update = await report_findings(state, runs=runs)
    spent = add_usage(state.get("usage"), update["usage"])
    handed = {"worker_results": update["worker_results"], "usage": spent}
    return Command(graph=Command.PARENT, update=handed)


def build_worker_graph(runs: LiveRuns, read: SettingsReader = validated) -> CompiledStateGraph:
    """One compiled worker; the research graph adds it under a node name per round kind.
    Its steps are handed `runs`, the research graph's live runs, and read the settings they
    were sent through `read` (the research graph's: guarded for remote callers)."""
    builder = StateGraph(WorkerState, input_schema=WorkerInput, output_schema=WorkerOutput)
    builder.add_node("observe", node(observe, runs, read=read))
    builder.add_node("orient", node(orient, runs, read=read))
    builder.add_node("decide", node(decide, runs, read=read))
    builder.add_node("act", node(act, runs, read=read))
    builder.add_node("report_findings", node(report_upward, runs, read=read))
    builder.add_edge(START, "observe")
    builder.add_edge("observe", "orient")
    builder.add_edge("orient", "decide")
    builder.add_conditional_edges("decide", route(route_after_decide))
    builder.add_conditional_edges("act", route(route_after_act))
    builder.add_edge("report_findings", END)
    return builder.compile(name="worker")
