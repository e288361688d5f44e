"""Look into the checkpoint store: the steps of one thread, and the recent threads."""

from __future__ import annotations

from typing import Any

from cli.runner import UnknownThread
from graph import build_graph
from graph.threads import thread_config
from tools.checkpoints import open_checkpointer


def _score(values: dict[str, Any]) -> str:
    quality = values.get("quality")
    return "-" if quality is None else f"{quality.score:.0f}"


async def history(target: str, thread_id: str) -> list[str]:
    """One line per checkpoint of a thread, oldest first: step, next nodes, round, score."""
    async with open_checkpointer(target, create=False) as saver:
        graph = build_graph(checkpointer=saver)
        rows = [snapshot async for snapshot in graph.aget_state_history(thread_config(thread_id))]
    if not rows:
        raise UnknownThread(f"no run with thread id {thread_id!r} in {target}")
    lines = [f"{'step':>4}  {'next':<40} {'round':>5} {'score':>5}  time"]
    for snapshot in reversed(rows):
        step = (snapshot.metadata or {}).get("step", "")
        upcoming = ", ".join(sorted(set(snapshot.next))) or "(end)"
        values = snapshot.values
        lines.append(
            f"{step:>4}  {upcoming:<40} {values.get('iteration', 0):>5} "
            f"{_score(values):>5}  {snapshot.created_at or ''}"
        )
    return lines


async def threads(target: str, limit: int = 20) -> list[str]:
    """The most recent threads (at most `limit`; 0 means all): id, status, rounds, stop reason."""
    async with open_checkpointer(target, create=False) as saver:
        graph = build_graph(checkpointer=saver)
        seen: list[str] = []
        async for item in saver.alist(None):
            if limit and len(seen) >= limit:
                break
            thread_id = item.config["configurable"]["thread_id"]
            if thread_id not in seen:
                seen.append(thread_id)
        lines = [f"{'thread':<34} {'status':<11} {'rounds':>6}  {'stop_reason':<17} question"]
        for thread_id in seen:
            snapshot = await graph.aget_state(thread_config(thread_id))
            values = snapshot.values
            if snapshot.interrupts:
                status = "waiting"
            elif snapshot.next:
                status = "unfinished"
            else:
                status = "done"
            lines.append(
                f"{thread_id:<34} {status:<11} {values.get('iteration', 0):>6}  "
                f"{values.get('stop_reason') or '-':<17} {values.get('question', '')[:60]}"
            )
    return lines
