"""Nothing gathered is lost (issue 36, item 1): when an earlier round's report scored higher, it
is revised with what the later rounds found, handed back unchanged only when they found nothing
new, and every door says which round's report the reader is given."""

from __future__ import annotations

import asyncio
import re

from deep_research.cli.summary import RunSummary, summary_rows
from deep_research.domain.report_length import NAMED_WORDS, WORDS_PER_SOURCE, text_words
from deep_research.graph.routes import dispatch_supplementary, route_after_quality
from deep_research.nodes.writing import keep_best_report
from deep_research.service.event_lines import describe
from deep_research.settings import Settings
from deep_research.state import (
    GapAnalysis,
    QualityAssessment,
    ReportSection,
    ScoredReport,
    SourceEvidence,
    WorkerResult,
)
from deep_research.tools.events import EarlierReportKept
from deep_research.web.pages import html_text, progress
from deep_research.web.view import RunView, fold_event

from fake_chat import Replies

SETTINGS = Settings(structured_output="prompt", language="en", model="fake", structured_retries=0)
QUESTION = "How do zstd and xz compare for log archives?"
NOTHING = {"disagreements": [], "set_aside": []}


def review(score: float, issues: list[str] | None = None) -> QualityAssessment:
    dims = dict.fromkeys(
        ["completeness", "accuracy", "depth", "structure", "readability", "source_quality"], score
    )
    return QualityAssessment(
        score=score, dimensions=dims, issues=issues or [], another_round_worthwhile=True
    )


def source(n: int, text: str) -> SourceEvidence:
    return SourceEvidence(id=n, url=f"https://s{n}.example/p", title=f"Page {n}", excerpt=text)


FIRST = WorkerResult(
    subtask_id=1,
    description="zstd decompression speed",
    findings=[{"claim": "zstd decompresses at 1,500 MB/s", "source_ids": [1]}],
    sources=[source(1, "zstd decompresses at 1,500 MB/s per core.")],
)
SECOND = WorkerResult(
    subtask_id=2,
    round=2,
    description="zstd decompression speed with threads",
    findings=[{"claim": "zstd decompression speed doubles with threads", "source_ids": [1]}],
    sources=[  # worker-local id 1; run-wide, it is source 2
        source(2, "zstd decompression speed doubles with 4 threads.").model_copy(update={"id": 1})
    ],
)
SPEED = ReportSection(
    title="zstd decompression speed",
    question="How fast does zstd decompress?",
    source_ids=[1],
    text="## zstd decompression speed\n\nzstd decompresses at 1,500 MB/s [1].",
)
BEST = ScoredReport(
    report=f"# {QUESTION}\n\n## zstd decompression speed\n\nzstd decompresses at 1,500 MB/s [1].",
    round=1,
    quality=review(71),
    sections=[SPEED],
)


def ending_state(results: list[WorkerResult], **extra) -> dict:
    """A run whose round 2 scored 46 after round 1's 71: it ends with the round-1 report."""
    return {
        "question": QUESTION,
        "settings": SETTINGS,
        "run_id": f"best-{id(extra)}",
        "worker_results": results,
        "iteration": 2,
        "report": "the round 2 report",
        "report_round": 2,
        "best": BEST,
        "quality": review(46, ["the new section contradicts the old one"]),
        "quality_history": [71, 46],
        "stop_reason": "declined",
        **extra,
    }


def test_the_earlier_report_is_revised_with_the_later_findings_and_says_so():
    replies = Replies()
    replies.extend(
        [
            NOTHING,
            "## zstd decompression speed\n\nzstd decompresses at 1,500 MB/s [1], twice that "
            "with 4 threads [2].",
            "## Summary\n\nzstd decompresses at 1,500 MB/s [1].",
            "## Conclusion\n\nDone.",
        ]
    )
    update = asyncio.run(keep_best_report(ending_state([FIRST, SECOND]), runs=replies.runs))
    revision = replies.sent[1][-1].content
    assert "Current section:" in revision
    assert "judged worse for: the new section contradicts the old one" in revision
    report = update["report"]
    assert "twice that with 4 threads [2]" in report  # round 2's finding, not lost
    assert report.startswith(
        f"# {QUESTION}\n\n*This is the round 1 report (rated 71/100), revised with what round 2 "
        "found: the later report was rated lower.*\n\n## Summary"
    )
    assert update["report_round"] == 1 and update["report_revised_with"] == [2]
    assert update["quality"].score == 71 and update["usage"].llm_calls == 4


def test_it_is_handed_back_unchanged_only_when_the_later_rounds_found_nothing():
    failed = SECOND.model_copy(update={"status": "failed", "findings": [], "error": "no hits"})
    replies = Replies()
    update = asyncio.run(keep_best_report(ending_state([FIRST, failed]), runs=replies.runs))
    assert replies.sent == [] and update["report_revised_with"] == []
    assert "the later report was rated lower and found nothing new" in update["report"]
    assert "zstd decompresses at 1,500 MB/s [1]." in update["report"]


def test_a_revision_that_fails_leaves_the_last_report_which_holds_the_later_findings():
    replies = Replies()
    replies.extend([NOTHING, "", "", "", ""])  # the section twice, then nothing usable
    update = asyncio.run(keep_best_report(ending_state([FIRST, SECOND]), runs=replies.runs))
    assert "report" not in update and "the last round's is handed back" in update["report_problem"]


def test_the_rounds_end_through_the_revision_only_when_an_earlier_report_scored_higher():
    worse = ending_state([FIRST, SECOND])
    assert route_after_quality(worse) == "keep_best_report"
    current = worse | {"best": BEST.model_copy(update={"round": 2})}
    assert route_after_quality(current) == "verify_citations"
    no_gaps = worse | {"gap_analysis": GapAnalysis(gaps=[], supplementary_tasks=[])}
    assert dispatch_supplementary(no_gaps) == "keep_best_report"


KEPT = EarlierReportKept(round=1, score=71, last_round=3, last_score=46, revised_with=[2, 3])


def test_every_door_says_which_rounds_report_it_is():
    assert describe(KEPT) == (
        "handing back the round 1 report (quality 71/100), revised with rounds 2, 3's "
        "findings: round 3 scored 46/100"
    )
    summary = RunSummary(3, 71, "declined", 9, 1, 1, 1, 0, 1.0, None)
    summary.report_round, summary.report_revised_with = 1, [2, 3]
    quality = dict(summary_rows(summary))["quality"]
    assert quality == "71/100 (the report of round 1, revised with rounds 2, 3's findings)"
    view = RunView("t", stop_reason="declined")
    fold_event(view, KEPT)
    page = html_text(progress(view, "en"))
    assert "This is the round 1 report (quality 71/100), revised with what round 2, 3 found" in page
    chinese = html_text(progress(view, "zh"))
    assert "这是第 1 轮的报告（评分 71/100），并已补入第 2, 3 轮的发现" in chinese


def test_the_report_header_is_in_the_runs_language():
    replies = Replies()
    failed = SECOND.model_copy(update={"status": "failed", "findings": []})
    chinese = ending_state(
        [FIRST, failed], settings=SETTINGS.model_copy(update={"language": "zh-Hans"})
    )
    update = asyncio.run(keep_best_report(chinese, runs=replies.runs))
    assert (
        "*本报告是第 1 轮的报告（评分 71/100）：之后的报告评分较低，且没有新的发现。*"
        in update["report"]
    )


def test_a_revision_is_asked_for_what_the_section_says_and_room_for_what_it_gains():
    """A revision is never asked to fit the first draft's share: round 1's section of ~420 words
    in a brief report (600 words) gains round 2's source, and its writer is asked for what the
    section says plus what one source can carry (asked for its share, a model shortens the
    section to obey and drops findings)."""
    facts = " ".join(f"Run {n} decompressed at {1_000 + n} MB/s [1]." for n in range(60))
    long_section = SPEED.model_copy(update={"text": f"## zstd decompression speed\n\n{facts}"})
    best = BEST.model_copy(update={"sections": [long_section]})
    brief = SETTINGS.model_copy(update={"report_length": "brief"})
    replies = Replies()
    revised = long_section.text + " Twice that with 4 threads [2]."
    replies.extend([NOTHING, revised, "## Summary\n\nFast [1].", "## Conclusion\n\nDone."])
    state = ending_state([FIRST, SECOND], best=best, settings=brief)
    asyncio.run(keep_best_report(state, runs=replies.runs))
    system = replies.sent[1][0].content
    asked = int(re.search(r"in about (\d+) words", system).group(1))
    assert asked == text_words(long_section.text) + WORDS_PER_SOURCE  # one source gained
    assert asked > NAMED_WORDS["brief"]


def test_words_count_a_cjk_character_as_one():
    assert text_words("## 速度\n\nzstd 解压 1,500 MB/s [1].") == 4 + 5  # 4 characters, 5 words
