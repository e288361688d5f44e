"""The summary of an eval: mean and spread per dimension and for citations, by language.

Quality scores are summarised per mode: relative scores (against a reference, 0-1) and absolute
ones (0-10) are different scales and never averaged together. Citation accuracy is pooled over
all judged pairs (supported / judged, DeepResearch Bench's "valid rate"), with the per-task mean
beside it; effective citations are averaged over the tasks that cite anything, as there.
"""

from __future__ import annotations

import statistics
from typing import Any

from deep_research.evaluation.contracts import DIMENSIONS
from deep_research.evaluation.layout import EvalDir, write_json
from deep_research.evaluation.records import TaskResult

ALL = "all"
FACT_MODES = {
    "pages": "Citations judged against the full pages, read again (guarded) per URL.",
    "snippets": "Citations judged against the snippets the run kept (--fact-mode snippets: the "
    "cheap mode; the run's own citation check already filtered these, so it is near circular).",
    "none": "Citations not checked (--fact-mode none).",
}


def spread(values: list[float]) -> dict[str, Any]:
    """n, mean and sample standard deviation (None below two values)."""
    if not values:
        return {"n": 0, "mean": None, "sd": None}
    sd = statistics.stdev(values) if len(values) > 1 else None
    return {"n": len(values), "mean": statistics.fmean(values), "sd": sd}


def _known(values: list[float | None]) -> dict[str, Any] | None:
    """The spread of values that are all known; None when any is unknown (cost without price)."""
    if any(v is None for v in values):
        return None
    return spread([v for v in values if v is not None])


def _group(results: list[TaskResult]) -> dict[str, Any]:
    """The figures of one group of tasks."""
    race = {}
    for mode in ("relative", "absolute"):
        scored = [r.race for r in results if r.race.mode == mode]
        if scored:
            race[mode] = {
                "overall": spread([s.overall for s in scored]),
                **{d: spread([s.dimensions[d] for s in scored]) for d in DIMENSIONS},
            }
    supported = sum(r.fact.supported for r in results)
    decided = sum(r.fact.supported + r.fact.unsupported for r in results)
    citing = [r.fact for r in results if r.fact.unique_pairs]
    return {
        "tasks": len(results),
        "race": race,
        "fact": {
            "citation_accuracy": supported / decided if decided else None,
            "citation_accuracy_per_task": spread(
                [f.citation_accuracy for f in citing if f.citation_accuracy is not None]
            ),
            "effective_citations": spread([f.effective_citations for f in citing]),
            "judged_citations": spread([f.supported + f.unsupported for f in citing]),
            "tasks_without_citations": len(results) - len(citing),
        },
        "research_cost_usd": _known([r.research_cost_usd for r in results]),
        "judge_cost_usd": _known([r.judge_cost_usd for r in results]),
        "research_seconds": spread([r.research_seconds for r in results]),
        "research_tokens": spread([r.research_usage.total_tokens for r in results]),
    }


NOT_COMPARABLE = (
    "RACE is not comparable: {n} of {total} tasks had an article cut to fit the judge's context "
    "window ({ids}); raise --judge-context-tokens (and use a judge that has it)"
)


def summarize(results: list[TaskResult], expected: int, fact_mode: str = "pages") -> dict[str, Any]:
    """The summary.json content: every task together, then by language; clipping counted."""
    languages = sorted({r.language for r in results})
    groups = {ALL: _group(results)}
    groups.update({lang: _group([r for r in results if r.language == lang]) for lang in languages})
    clipped = [str(r.id) for r in results if r.race.clipped]
    return {
        "tasks_scored": len(results),
        "tasks_expected": expected,
        "clipped_tasks": len(clipped),
        "clipped_ids": clipped,
        "race_comparable": not clipped,
        "fact_mode": fact_mode,
        "groups": groups,
    }


def _cell(figure: dict[str, Any] | None, digits: int = 3) -> str:
    """mean ± sd, for a table."""
    if not figure or figure["mean"] is None:
        return "–"
    text = f"{figure['mean']:.{digits}f}"
    return text + (f" ± {figure['sd']:.{digits}f}" if figure["sd"] is not None else "")


def markdown(summary: dict[str, Any]) -> str:
    """The summary as Markdown tables: quality per mode, then citations and cost."""
    groups = summary["groups"]
    lines = [f"Tasks scored: {summary['tasks_scored']} of {summary['tasks_expected']}", ""]
    clipped = summary.get("clipped_tasks", 0)
    lines += [f"Clipped tasks (an article cut to fit the judge's context): {clipped}", ""]
    if clipped:
        ids = ", ".join(summary["clipped_ids"])
        lines += [
            "**" + NOT_COMPARABLE.format(n=clipped, total=summary["tasks_scored"], ids=ids) + "**",
            "",
        ]
    titles = {
        "relative": "Quality relative to the reference (0-1; 0.5 = as good as the reference)",
        "absolute": "Quality without a reference (0-10)",
    }
    for mode, title in titles.items():
        rows = [(name, g["race"][mode]) for name, g in groups.items() if mode in g["race"]]
        if not rows:
            continue
        lines += [f"### {title}", "", "| group | n | overall | " + " | ".join(DIMENSIONS) + " |"]
        lines.append("| --- " * (3 + len(DIMENSIONS)) + "|")
        for name, race in rows:
            cells = [_cell(race[d]) for d in DIMENSIONS]
            lines.append(
                f"| {name} | {race['overall']['n']} | {_cell(race['overall'])} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    lines += [
        "### Citations and cost",
        "",
        FACT_MODES.get(summary.get("fact_mode", "pages"), ""),
        "",
        "| group | tasks | citation accuracy | effective citations | research cost $ "
        "| research s |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, g in groups.items():
        accuracy = g["fact"]["citation_accuracy"]
        lines.append(
            f"| {name} | {g['tasks']} | {'–' if accuracy is None else f'{accuracy:.3f}'} | "
            f"{_cell(g['fact']['effective_citations'], 1)} | {_cell(g['research_cost_usd'], 4)} | "
            f"{_cell(g['research_seconds'], 1)} |"
        )
    return "\n".join(lines) + "\n"


def write_summary(
    layout: EvalDir, results: list[TaskResult], expected: int, fact_mode: str = "pages"
) -> dict[str, Any]:
    """Write summary.json and summary.md; returns the summary."""
    summary = summarize(results, expected, fact_mode)
    write_json(layout.summary_json, summary)
    layout.summary_md.write_text(markdown(summary), encoding="utf-8")
    return summary
