"""Two evals side by side: per task, the paired difference (B - A) of each score.

Tasks are paired by id; a task scored in one folder only, or in different modes (one against a
reference, one without), is listed as unpaired rather than compared. Relative scores (0-1) and
absolute ones (0-10) are different scales: their differences are summarised in separate rows,
never averaged together. The folders' recorded judge, criteria, references and scoring mode
must agree (`mismatches`), else the difference could be the judge's, not the systems'.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deep_research.evaluation.contracts import DIMENSIONS
from deep_research.evaluation.layout import EvalDir, read_record
from deep_research.evaluation.records import RaceMode, TaskResult
from deep_research.evaluation.summary import spread

QUALITY = ("overall", *DIMENSIONS)
RACE_MODES: tuple[RaceMode, ...] = ("relative", "absolute")
SCALE = {"relative": "0-1", "absolute": "0-10"}
AGREE = ("judge", "criteria", "references", "mode")  # what two compared folders must share


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
        return _differences(self.rows, figure)

    def paired(self) -> dict[str, Any]:
        """Mean and spread of the paired differences, and B's wins and losses.

        Quality figures per mode (`relative` and `absolute` apart, each on its own scale);
        citation accuracy (0-1 in both modes) over every paired task.
        """
        result: dict[str, Any] = {}
        for mode in RACE_MODES:
            rows = [row for row in self.rows if row[2] == mode]
            if rows:
                result[mode] = {f: _summary(_differences(rows, f)) for f in QUALITY}
        result["citation_accuracy"] = _summary(self.differences("citation_accuracy"))
        return result


def _differences(rows: list, figure: str) -> list[float]:
    """B - A of one figure over the rows where both are known."""
    return [diff for _, _, _, a, b in rows if (diff := _diff(a, b, figure)) is not None]


def _summary(diffs: list[float]) -> dict[str, Any]:
    """The spread of some differences, and how often B or A was better."""
    return {
        **spread(diffs),
        "b_better": sum(d > 0 for d in diffs),
        "a_better": sum(d < 0 for d in diffs),
    }


def mismatches(manifest_a: dict[str, Any], manifest_b: dict[str, Any]) -> list[str]:
    """What two eval folders' manifests (eval.json) disagree on among judge, criteria,
    references and scoring mode; one line each."""
    return [
        f"{key}: A {manifest_a.get(key)!r} vs B {manifest_b.get(key)!r}"
        for key in AGREE
        if _content(manifest_a.get(key)) != _content(manifest_b.get(key))
    ]


def _content(value: Any) -> Any:
    """What a recorded value is about: a file by its hash alone, anything else as it is."""
    return value["sha256"] if isinstance(value, dict) and "sha256" in value else value


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
    lines += ["", "| paired difference B − A | scale | n | mean | sd | B better | A better |"]
    lines.append("| --- | --- | --- | --- | --- | --- | --- |")
    paired = comparison.paired()
    named = [
        (f"{figure} ({mode})", SCALE[mode], paired[mode][figure])
        for mode in RACE_MODES
        if mode in paired
        for figure in QUALITY
    ]
    named.append(("citation accuracy", "0-1", paired["citation_accuracy"]))
    for name, scale, figures in named:
        lines.append(
            f"| {name} | {scale} | {figures['n']} | {_signed(figures['mean'])} | "
            f"{_number(figures['sd'])} | {figures['b_better']} | {figures['a_better']} |"
        )
    if comparison.unpaired:
        lines += [
            "",
            "Unpaired (scored in one folder only, or in different modes): "
            + ", ".join(comparison.unpaired),
        ]
    return "\n".join(lines) + "\n"
