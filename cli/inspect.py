"""Look into the checkpoint store: the steps of one thread, and the recent threads."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from deep_research.cli.runner import UnknownThread
from deep_research.domain.labels import score_text
from deep_research.graph import build_graph
from deep_research.graph.threads import thread_config
from deep_research.tools.checkpoints import open_checkpointer
from deep_research.tools.secrets import mask_url_passwords


def _score(values: dict[str, Any]) -> str:
    quality = values.get("quality")
    return score_text(None if quality is None else quality.score, unknown="-")


async def history(target: str, thread_id: str) -> list[str]:
    """One line per checkpoint of a thread, oldest first: step, next nodes, round, score."""
    async with open_checkpointer(target, create=False) as saver:
        graph = build_graph(checkpointer=saver)
        rows = [snapshot async for snapshot in graph.aget_state_history(thread_config(thread_id))]
    if not rows:
        raise UnknownThread(f"no run with thread id {thread_id!r} in {mask_url_passwords(target)}")
    lines = [f"{'step':>4}  {'next':<40} {'round':>5} {'score':>7}  time"]
    for snapshot in reversed(rows):
        step = (snapshot.metadata or {}).get("step", "")
        upcoming = ", ".join(sorted(set(snapshot.next))) or "(end)"
        values = snapshot.values
        lines.append(
            f"{step:>4}  {upcoming:<40} {values.get('iteration', 0):>5} "
            f"{_score(values):>7}  {snapshot.created_at or ''}"
        )
    return lines


def thread_status(snapshot: StateSnapshot) -> str:
    """done, waiting (for a person's answer) or unfinished, as the store says."""
    if snapshot.interrupts:
        return "waiting"
    return "unfinished" if snapshot.next else "done"


async def recent_threads(
    saver: BaseCheckpointSaver, graph: Pregel, limit: int = 20
) -> list[tuple[str, StateSnapshot]]:
    """The most recent threads (at most `limit`; 0 means all), newest first, with their state."""
    seen: list[str] = []
    async for item in saver.alist(None):
        if limit and len(seen) >= limit:
            break
        thread_id = item.config["configurable"]["thread_id"]
        if thread_id not in seen:
            seen.append(thread_id)
    return [(t, await graph.aget_state(thread_config(t))) for t in seen]


async def threads(target: str, limit: int = 20) -> list[str]:
    """The most recent threads (at most `limit`; 0 means all): id, status, rounds, stop reason."""
    async with open_checkpointer(target, create=False) as saver:
        graph = build_graph(checkpointer=saver)
        rows = await recent_threads(saver, graph, limit)
    wide = max(
        [len("thread"), *(len(thread_id) for thread_id, _ in rows)]
    )  # `mcp-` and 32 hex digits: 36
    lines = [f"{'thread':<{wide}}  {'status':<11} {'rounds':>6}  {'stop_reason':<17} question"]
    for thread_id, snapshot in rows:
        values = snapshot.values
        lines.append(
            f"{thread_id:<{wide}}  {thread_status(snapshot):<11} {values.get('iteration', 0):>6}  "
            f"{values.get('stop_reason') or '-':<17} {values.get('question', '')[:60]}"
        )
    return lines
