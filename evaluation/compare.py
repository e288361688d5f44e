"""Two evals side by side: per task, the paired difference (B - A) of each score.

Tasks are paired by id; a task scored in one folder only, or in different modes (one against a
reference, one without), is listed as unpaired rather than compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.layout import EvalDir, read_record
from evaluation.records import TaskResult
from evaluation.summary import spread
from state import DIMENSIONS

FIGURES = ("overall", *DIMENSIONS, "citation_accuracy")


def _figures(result: TaskResult) -> dict[str, float | None]:
    """The scores of one task that a comparison pairs."""
    return {
        "overall": result.race.overall,
        **{d: result.race.dimensions[d] for d in DIMENSIONS},
        "citation_accuracy": result.fact.citation_accuracy,
    }


@dataclass
class Comparison:
    """Paired rows (task id, language, mode, A's and B's figures) and the unpaired ids."""

    rows: list[tuple[str, str, str, dict[str, float | None], dict[str, float | None]]]
    unpaired: list[str]

    def differences(self, figure: str) -> list[float]:
        """B - A of one figure over the tasks where both are known."""
        return [diff for _, _, _, a, b in self.rows if (diff := _diff(a, b, figure)) is not None]

    def paired(self) -> dict[str, Any]:
        """Mean and spread of the paired differences per figure, and B's wins and losses."""
        result = {}
        for figure in FIGURES:
            diffs = self.differences(figure)
            result[figure] = {
                **spread(diffs),
                "b_better": sum(d > 0 for d in diffs),
                "a_better": sum(d < 0 for d in diffs),
            }
        return result


def _results(folder: Path) -> dict[str, TaskResult]:
    """The scored tasks of one eval folder, by id."""
    results = (read_record(path, TaskResult) for path in EvalDir(folder).result_files())
    return {str(r.id): r for r in results if r is not None}


def compare(folder_a: Path, folder_b: Path) -> Comparison:
    """Pair the scored tasks of two eval folders by id."""
    a, b = _results(folder_a), _results(folder_b)
    rows, unpaired = [], []
    for task_id in sorted(set(a) | set(b), key=lambda i: (len(i), i)):
        if task_id in a and task_id in b and a[task_id].race.mode == b[task_id].race.mode:
            left, right = a[task_id], b[task_id]
            rows.append((task_id, left.language, left.race.mode, _figures(left), _figures(right)))
        else:
            unpaired.append(task_id)
    return Comparison(rows, unpaired)


def _number(value: float | None) -> str:
    """A figure for the table; a dash when unknown."""
    return "–" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    """A difference for the table, with its sign; a dash when unknown."""
    return "–" if value is None else f"{value:+.3f}"


def _diff(a: dict[str, float | None], b: dict[str, float | None], figure: str) -> float | None:
    """B - A of one figure, None when either is unknown."""
    left, right = a[figure], b[figure]
    return None if left is None or right is None else right - left


def markdown(comparison: Comparison, name_a: str, name_b: str) -> str:
    """The per-task table of overall score and citation accuracy, then the paired means."""
    lines = [
        f"A = {name_a}",
        f"B = {name_b}",
        "",
        "| task | lang | mode | A overall | B overall | B − A "
        "| A citations | B citations | B − A |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for task_id, language, mode, a, b in comparison.rows:
        lines.append(
            f"| {task_id} | {language} | {mode} | {_number(a['overall'])} | "
            f"{_number(b['overall'])} | {_signed(_diff(a, b, 'overall'))} | "
            f"{_number(a['citation_accuracy'])} | {_number(b['citation_accuracy'])} | "
            f"{_signed(_diff(a, b, 'citation_accuracy'))} |"
        )
    lines += ["", "| paired difference B − A | n | mean | sd | B better | A better |"]
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for figure, figures in comparison.paired().items():
        lines.append(
            f"| {figure} | {figures['n']} | {_signed(figures['mean'])} | "
            f"{_number(figures['sd'])} | {figures['b_better']} | {figures['a_better']} |"
        )
    if comparison.unpaired:
        lines += [
            "",
            "Unpaired (scored in one folder only, or in different modes): "
            + ", ".join(comparison.unpaired),
        ]
    return "\n".join(lines) + "\n"
