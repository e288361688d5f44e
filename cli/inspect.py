"""Look into the store through the run service: the checkpoints of one run, the recent runs."""

from __future__ import annotations

from typing import Any

from deep_research.cli.runner import CALLER, reading
from deep_research.domain.labels import score_text


def _score(values: dict[str, Any]) -> str:
    quality = values.get("quality")
    return score_text(None if quality is None else quality.score, unknown="-")


async def history(target: str, thread_id: str, all_doors: bool = False) -> list[str]:
    """One line per checkpoint of a run, oldest first: step, next nodes, round, score."""
    async with reading(target, all_doors) as service:
        rows = await service.history(CALLER, thread_id)
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


async def threads(target: str, limit: int = 20, all_doors: bool = False) -> list[str]:
    """The most recent runs (at most `limit`; 0 means all), from the index of runs: id,
    status, rounds, stop reason, question."""
    async with reading(target, all_doors) as service:
        listed = await service.list(CALLER, limit)
    wide = max([len("thread"), *(len(item.row.run_id) for item in listed)])
    lines = [f"{'thread':<{wide}}  {'status':<11} {'rounds':>6}  {'stop_reason':<17} question"]
    for item in listed:
        row = item.row
        lines.append(
            f"{row.run_id:<{wide}}  {item.status:<11} {row.rounds:>6}  "
            f"{row.stop_reason or '-':<17} {row.question[:60]}"
        )
    return lines
