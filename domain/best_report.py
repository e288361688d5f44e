"""Which report a run hands back: its best-scored one, unless a later one is at least as good.

A revision can make a report worse (scores 71, 42, 46): the run keeps the best-scored report
(with its sections) as it goes, and when it ends, an earlier report that scored higher than the
current one (or than a current one no review could score) is the one handed back, revised with
what the later rounds found (`nodes.writing.keep_best_report`), saying which round wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence

from deep_research.state import QualityAssessment, ReportSection, ScoredReport


def best_so_far(
    best: ScoredReport | None,
    report: str,
    round_: int,
    quality: QualityAssessment | None,
    sections: Sequence[ReportSection] = (),
) -> ScoredReport | None:
    """The best-scored report after a review of `report`: it, when at least as good as the best."""
    if quality is None:
        return best
    if best is None or quality.score >= best.quality.score:
        return ScoredReport(report=report, round=round_, quality=quality, sections=list(sections))
    return best


def handed_back(best: ScoredReport | None, round_: int) -> ScoredReport | None:
    """The earlier report to hand back instead of round `round_`'s, or None to keep the current.

    `best` already holds the current report when its review scored it at least as high.
    """
    return best if best is not None and best.round != round_ else None
