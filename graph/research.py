"""The research graph: plan, fan out workers, write, review, and fill gaps until a stop rule."""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from deep_research.graph.routes import (
    dispatch_supplementary,
    finish,
    route_after_approval,
    route_after_plan,
    route_after_quality,
    route_after_research,
    route_after_synthesis,
)
from deep_research.graph.served import for_the_server
from deep_research.graph.settings_guard import reader_for
from deep_research.graph.sync_bridge import node, route
from deep_research.graph.worker import build_worker_graph
from deep_research.nodes.approval import approve_plan
from deep_research.nodes.clarifying import clarify_step
from deep_research.nodes.planning import decompose, decompose_for_remote_callers
from deep_research.nodes.reviewing import analyze_gaps, quality_check
from deep_research.nodes.verifying import verify_citations
from deep_research.nodes.writing import finalize, keep_best_report, refine_report, synthesize
from deep_research.settings import Settings, load_price_table
from deep_research.state import ResearchInput, ResearchOutput, ResearchState
from deep_research.tools.models import given_models
from deep_research.tools.process_wide import built_for_good
from deep_research.tools.run_resources import LiveRuns


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    chat_model: BaseChatModel | Mapping[str, BaseChatModel] | None = None,
    runs: LiveRuns | None = None,
    remote_callers: bool = False,
) -> CompiledStateGraph:
    """A fresh compiled research graph; pass a checkpointer to make runs resumable.

    Without `chat_model`, each role's model name (settings) is resolved: a plain name on the
    OpenAI-compatible endpoint, `provider:model` through LangChain's `init_chat_model`. With
    it, that chat model answers every role (or, as a mapping, the roles it names). The model
    object stays out of state and checkpoints: a resumed run is given it again the same way.

    `runs` holds the live runs' in-memory resources (cache, limits, ledger); pass your own to
    open a resumed run first (`LiveRuns.resume`) or to look at it; by default the graph makes
    one. Its chat models are the ones `chat_model` names, if given.

    With `remote_callers`, the settings a caller passes cannot switch a security guard off nor
    name what the server reads or starts (`domain.caller_settings.for_remote_caller`, applied
    wherever a step or route reads settings, on every run): only the server's environment can.
    """
    if runs is None:
        runs = LiveRuns(given_models(chat_model)) if chat_model is not None else LiveRuns()
    elif chat_model is not None:
        raise ValueError("give the chat model to LiveRuns(...) or to build_graph, not both")
    builder = StateGraph(
        ResearchState,
        context_schema=Settings,
        input_schema=ResearchInput,
        output_schema=ResearchOutput,
    )
    read = reader_for(remote_callers)  # every step and route reads the settings through it
    worker = build_worker_graph(runs, read)
    planner = decompose_for_remote_callers if remote_callers else decompose
    # asks back only where an answer can resume it: with a checkpointer (the server has its own)
    asking = clarify_step(
        caller_runs_it=not remote_callers, can_pause=checkpointer is not None or remote_callers
    )
    builder.add_node("clarify", node(asking, runs))  # reads the caller's settings itself
    builder.add_node("decompose", node(planner, runs))  # reads the caller's settings itself
    builder.add_node("approve_plan", node(approve_plan, runs, read=read))
    builder.add_node("research", worker)
    builder.add_node("synthesize", node(synthesize, runs, read=read))
    builder.add_node("quality_check", node(quality_check, runs, read=read))
    builder.add_node("analyze_gaps", node(analyze_gaps, runs, read=read))
    builder.add_node("supplementary_research", worker)
    builder.add_node("refine_report", node(refine_report, runs, read=read))
    builder.add_node("keep_best_report", node(keep_best_report, runs, read=read))
    builder.add_node("verify_citations", node(verify_citations, runs, read=read))
    builder.add_node("finalize", node(finalize, runs, ends_run=True, read=read))

    builder.add_edge(START, "clarify")
    builder.add_edge("clarify", "decompose")
    builder.add_conditional_edges(
        "decompose", route(route_after_plan, read), ["approve_plan", "research", "synthesize"]
    )
    builder.add_conditional_edges(
        "approve_plan", route(route_after_approval, read), ["research", "finalize"]
    )
    builder.add_conditional_edges(
        "research", route(route_after_research, read), ["research", "synthesize"]
    )
    builder.add_conditional_edges("synthesize", route(route_after_synthesis, read))
    builder.add_conditional_edges("quality_check", route(route_after_quality, read))
    builder.add_conditional_edges(
        "analyze_gaps",
        route(dispatch_supplementary, read),
        ["supplementary_research", "keep_best_report", "verify_citations", "finalize"],
    )
    builder.add_conditional_edges("keep_best_report", route(finish, read))
    builder.add_edge("supplementary_research", "refine_report")
    builder.add_edge("refine_report", "quality_check")
    builder.add_edge("verify_citations", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(checkpointer=checkpointer, name="deep_research")


graph = build_graph()
"""Compiled without a checkpointer, for Python callers."""
served = for_the_server(build_graph(remote_callers=True))
"""What `langgraph.json` serves (`langgraph dev` has its own checkpointer): its API callers'
settings cannot switch a security guard off."""
load_price_table()  # each run looks its prices up: the table lives as long as the process
built_for_good()  # what a process imported to run research stays: out of the GC's full passes
