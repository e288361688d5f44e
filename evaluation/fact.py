"""Citations, FACT-style: the report's (statement, URL) pairs, deduplicated, checked by the judge.

Pairs come from the final report's [n] markers (our reports cite by id, so no model is needed to
find them) and the run's source list; the page text is what the run's searches returned for
that URL. Per URL, statements that are the same text are merged without a model; whether two
different wordings say the same thing is the judge's call, as in DeepResearch Bench.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from domain.sources import normalize_url
from domain.statements import cited_statements
from evaluation.judge import Judge
from evaluation.records import FactScore, JudgedStatement
from nodes import prompts
from state import DistinctStatements, FactJudgment, FactJudgments, Source, SourceEvidence, Usage

NO_TEXT = "the run retrieved no text for this page"


@dataclass(frozen=True)
class Pair:
    """One statement of the report and one URL it cites."""

    statement: str
    source_id: int
    url: str


def report_pairs(report: str, sources: list[Source]) -> list[Pair]:
    """Every (statement, cited URL) pair of the report, in order; unknown ids are skipped."""
    by_id = {s.id: s for s in sources}
    return [
        Pair(statement.text, source_id, by_id[source_id].url)
        for statement in cited_statements(report)
        for source_id in statement.source_ids
        if source_id in by_id
    ]


def _same_text(text: str) -> str:
    """What two copies of one statement share: the words, case and spacing aside."""
    return " ".join(text.casefold().split())


def group_by_url(pairs: list[Pair]) -> dict[str, list[Pair]]:
    """The pairs per URL (normalised), each text once, in first-seen order."""
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        group = groups.setdefault(normalize_url(pair.url), [])
        if all(_same_text(p.statement) != _same_text(pair.statement) for p in group):
            group.append(pair)
    return groups


async def distinct(group: list[Pair], judge: Judge, usage: list[Usage]) -> list[Pair]:
    """The statements of one URL that say different things (the judge merges rewordings)."""
    if len(group) < 2:
        return group
    contract = DistinctStatements.for_statements(len(group))
    reply = await judge.ask(contract, prompts.judge_duplicates([p.statement for p in group]), usage)
    return [group[n - 1] for n in sorted(reply.keep)]


async def judge_page(
    group: list[Pair], page: str, judge: Judge, usage: list[Usage]
) -> list[JudgedStatement]:
    """The judge's verdict on each statement citing one page, from the page's text."""
    if not page.strip():
        verdicts = [
            FactJudgment(statement=n, result="unknown", reason=NO_TEXT)
            for n in range(1, len(group) + 1)
        ]
    else:
        messages = prompts.judge_facts(
            [p.statement for p in group], page, judge.settings.max_context_tokens
        )
        reply = await judge.ask(FactJudgments.for_statements(len(group)), messages, usage)
        verdicts = sorted(reply.judgments, key=lambda j: j.statement)
    return [
        JudgedStatement(
            statement=pair.statement,
            url=pair.url,
            source_id=pair.source_id,
            result=verdict.result,
            reason=verdict.reason,
        )
        for pair, verdict in zip(group, verdicts, strict=True)
    ]


def fact_score(pairs: int, judged: list[JudgedStatement]) -> FactScore:
    """Citation accuracy and effective citations of one report."""
    count = {r: sum(j.result == r for j in judged) for r in ("supported", "unsupported", "unknown")}
    decided = count["supported"] + count["unsupported"]
    return FactScore(
        pairs=pairs,
        unique_pairs=len(judged),
        supported=count["supported"],
        unsupported=count["unsupported"],
        unknown=count["unknown"],
        citation_accuracy=count["supported"] / decided if decided else None,
        effective_citations=count["supported"],
        judged=judged,
    )


LivePage = Callable[[str, str], Awaitable[str]]
"""The live text of a page (url, the statements as a query): the guarded page reader's `text`."""


async def check_citations(
    report: str,
    sources: list[Source],
    evidence: list[SourceEvidence],
    judge: Judge,
    usage: list[Usage],
    live_page: LivePage | None = None,
) -> FactScore:
    """Extract, deduplicate and judge every (statement, URL) pair of a report.

    Each page is the text the run retrieved; with `live_page` (`--refetch`), the live page's
    passages that bear on the statements, or the retrieved text where it cannot be read.
    """
    pairs = report_pairs(report, sources)
    pages = {normalize_url(s.url): s.excerpt for s in evidence}
    groups = group_by_url(pairs)
    refetched: list[str] = []

    async def one_url(url: str, group: list[Pair]) -> list[JudgedStatement]:
        kept = await distinct(group, judge, usage)
        page = pages.get(url, "")
        if live_page is not None:
            live = await live_page(group[0].url, " ".join(p.statement for p in kept))
            if live.strip():
                page = live
                refetched.append(url)
        return await judge_page(kept, page, judge, usage)

    judged = await asyncio.gather(*(one_url(url, group) for url, group in groups.items()))
    score = fact_score(len(pairs), [j for page in judged for j in page])
    return score.model_copy(update={"pages_refetched": len(refetched)})
