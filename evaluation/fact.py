"""Citations, FACT-style: the report's (statement, URL) pairs, deduplicated, checked by the judge.

Pairs come from the final report's [n] markers and the run's source list when there is one (our
reports cite by id, so no model is needed to find them); a report from elsewhere (`--articles`)
has its (statement, URL) pairs extracted by the fact judge, as DeepResearch Bench does. Per URL,
statements that are the same text are merged without a model; whether two different wordings
say the same thing is the judge's call, as in the benchmark.

Each page is judged as the benchmark does it, from its full text read again through the guarded
page reader (`--fact-mode pages`, cached per URL for the whole eval); a page that cannot be read
is reported as unreadable (`unknown`), never judged against a snippet. `--fact-mode snippets`
is the cheap mode: the text the run's own searches kept, which its citation check has already
filtered, so it is close to circular and named as such in the summary.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from deep_research.domain.sources import normalize_url, parses
from deep_research.domain.statements import cited_statements
from deep_research.evaluation import prompts
from deep_research.evaluation.contracts import (
    CitedFacts,
    DistinctStatements,
    FactJudgment,
    FactJudgments,
)
from deep_research.evaluation.judge import Judge
from deep_research.evaluation.records import FactScore, JudgedStatement
from deep_research.state import Source, SourceEvidence, Usage

NO_TEXT = "the run retrieved no text for this page"
UNREADABLE = "the page could not be read (refused, failed or empty); not judged"
UNPARSABLE = "the cited address does not parse; kept as text, not read, not judged"
FactMode = Literal["pages", "snippets", "none"]


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


async def extracted_pairs(report: str, judge: Judge, usage: list[Usage]) -> list[Pair]:
    """The (statement, URL) pairs of a report from elsewhere, as the fact judge extracts them."""
    reply = await judge.ask(CitedFacts, prompts.judge_extract(report, judge.context_tokens), usage)
    return [
        Pair(fact.fact, 0, fact.url)
        for fact in reply.facts
        if fact.fact.strip() and fact.url.startswith(("http://", "https://"))
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


async def own_verdicts(
    group: list[Pair], page: str, judge: Judge, usage: list[Usage]
) -> list[FactJudgment]:
    """Our verdict prompt: one numbered verdict per statement, from the page's text."""
    messages = prompts.judge_facts([p.statement for p in group], page, judge.context_tokens)
    reply = await judge.ask(FactJudgments.for_statements(len(group)), messages, usage)
    return sorted(reply.judgments, key=lambda j: j.statement)


class FactAsker(Protocol):
    """How the FACT judge is asked: our prompts (`OWN`) or the benchmark's (`bench_fact`)."""

    async def extract(self, report: str, judge: Judge, usage: list[Usage]) -> list[Pair]: ...

    async def distinct(self, group: list[Pair], judge: Judge, usage: list[Usage]) -> list[Pair]: ...

    async def verdicts(
        self, group: list[Pair], page: str, judge: Judge, usage: list[Usage]
    ) -> list[FactJudgment]: ...


class OwnPrompts:
    """Our own extraction, merging and verdict prompts (structured-output contracts)."""

    extract = staticmethod(extracted_pairs)
    distinct = staticmethod(distinct)
    verdicts = staticmethod(own_verdicts)


OWN = OwnPrompts()


async def judge_page(
    group: list[Pair],
    page: str,
    judge: Judge,
    usage: list[Usage],
    empty: str = NO_TEXT,
    asker: FactAsker = OWN,
) -> list[JudgedStatement]:
    """The judge's verdict on each statement citing one page, from the page's text."""
    if not page.strip():
        verdicts = [
            FactJudgment(statement=n, result="unknown", reason=empty)
            for n in range(1, len(group) + 1)
        ]
    else:
        verdicts = await asker.verdicts(group, page, judge, usage)
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


WholePage = Callable[[str], Awaitable[str]]
"""The full text of a page (empty when unreadable): the guarded page reader's `whole`."""


async def check_citations(
    report: str,
    sources: list[Source],
    evidence: list[SourceEvidence],
    judge: Judge,
    usage: list[Usage],
    whole_page: WholePage | None = None,
    asker: FactAsker = OWN,
) -> FactScore:
    """Extract, deduplicate and judge every (statement, URL) pair of a report.

    With `whole_page` (fact mode `pages`), each page's full text read again, an unreadable page
    reported as such; without it (mode `snippets`), the text the run retrieved for the URL.
    A report without a source list has its pairs extracted by the judge.
    """
    pairs = report_pairs(report, sources) if sources else await asker.extract(report, judge, usage)
    snippets = {normalize_url(s.url): s.excerpt for s in evidence}
    groups = group_by_url(pairs)
    read: list[str] = []
    unreadable: list[str] = []

    async def one_url(url: str, group: list[Pair]) -> list[JudgedStatement]:
        if not parses(group[0].url):  # one bad address costs its own pairs, not the report
            return await judge_page(group, "", judge, usage, UNPARSABLE, asker)
        kept = await asker.distinct(group, judge, usage) if len(group) > 1 else group
        if whole_page is None:
            return await judge_page(kept, snippets.get(url, ""), judge, usage, asker=asker)
        page = await whole_page(group[0].url)
        (read if page.strip() else unreadable).append(url)
        return await judge_page(kept, page, judge, usage, UNREADABLE, asker)

    judged = await asyncio.gather(*(one_url(url, group) for url, group in groups.items()))
    score = fact_score(len(pairs), [j for page in judged for j in page])
    return score.model_copy(
        update={
            "mode": "snippets" if whole_page is None else "pages",
            "pages_read": len(read),
            "pages_unreadable": len(unreadable),
        }
    )
