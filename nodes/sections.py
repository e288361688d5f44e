"""The sectioned writer: an outline first, then every section from its own evidence, all at
once, then the summary and the conclusion; a gap round revises only the sections it touches.

Each section is one model call with its own reply cap (`domain.report_length`). The calls are
made inside one node with `asyncio.gather`; every answered call is saved to the checkpoint as
it comes back (`tools.durable_calls`), so a run killed while writing pays again only for the
sections still in flight.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage

from deep_research.domain.degenerate import prose_problem
from deep_research.domain.evidence import (
    EvidenceDesk,
    SectionEvidence,
    by_source,
    homes,
    most_others,
    pool,
)
from deep_research.domain.fences import without_fences
from deep_research.domain.json_reply import strip_reasoning
from deep_research.domain.markup import ids_in
from deep_research.domain.outline import (
    compose,
    fallback_outline,
    fitting,
    gives_a_side,
    heading_of,
    holding,
    notes_section,
    placed,
    shaped_outline,
    stated,
    with_heading,
)
from deep_research.domain.report_frame import cited_only, report_title
from deep_research.domain.report_length import (
    LengthPlan,
    length_plan,
    revision_words,
    section_tokens,
    section_words,
)
from deep_research.domain.sources import SourceRegistry
from deep_research.nodes import prompts
from deep_research.nodes.weighing import weigh
from deep_research.state import (
    OutlineSection,
    Quote,
    ReportOutline,
    ReportSection,
    ResearchState,
    Source,
    SourceEvidence,
    Usage,
    WeighedEvidence,
    WorkerResult,
)
from deep_research.tools.events import ReplyDegenerate, emit
from deep_research.tools.model_client import ModelClient
from deep_research.tools.run_resources import RunResources
from deep_research.tools.streaming import ReplyTooLong
from deep_research.tools.structured import StructuredOutputError, ask, overlong_cost, write_raw

SUMMARY_WORDS = 220  # the summary's words at most (its reply cap follows)
CONCLUSION_WORDS = 160


@dataclass(frozen=True)
class Written:
    """What a writing round produced: the report and the sections it is made of."""

    sections: list[ReportSection]
    report: str  # "" when no section could be written
    usage: Usage
    problem: str  # "" or why no section could be written
    written: int  # sections written or revised this round
    outline_fallback: str = ""
    weighed: WeighedEvidence = field(default_factory=WeighedEvidence)


@dataclass(frozen=True)
class Review:
    """What a review found that a revision acts on: evidence it said the report left out,
    statements about another entity, and (revising a report a later round did worse than)
    that round's issues."""

    omitted: list[Quote] = field(default_factory=list)
    other_entity: list[str] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)


async def written_report(
    messages: list[BaseMessage],
    client: ModelClient,
    sources: list[Source] | None,
    current: str = "",
    cap: int | None = None,
) -> tuple[str, Usage, str]:
    """The writer's text, asked again once with the failure named when it is degenerate.

    Returns the text, its usage, and "" — or "", the usage, and the problem when the second
    reply is degenerate too (empty, cut off, echoing the prompt, looping, or citing none of
    `sources`, the ones it may cite; None: it need cite none): never such a reply. `current`
    is text it may repeat; `cap` its reply cap in tokens.
    """
    usage = Usage()
    conversation = messages
    stats = client.stats.of("writer")
    for attempt in range(2):
        try:
            text, cost, finish = await write_raw(
                conversation, role="writer", client=client, cap=cap
            )
        except ReplyTooLong as error:  # unusable like any other reply: asked once more, shorter
            text, cost, finish = "", overlong_cost(error, "writer", conversation), "too_long"
            client.record("writer", cost)
            problem = f"{error}; write it within {error.max_tokens} tokens"
        usage += cost
        text = strip_reasoning(text)
        if finish != "too_long":
            problem = prose_problem(text, finish, messages, own=current, sources=sources)
        if problem is None:
            return without_fences(text), usage, ""
        stats.degenerate += 1
        emit(ReplyDegenerate(role="writer", problem=problem, final=attempt == 1))
        if attempt == 0:
            stats.reasks += 1
            last = conversation[-1]
            note = HumanMessage(f"{last.text}\n\n{prompts.fix_report(problem)}")
            conversation = [*conversation[:-1], note]
    return "", usage, problem


@dataclass(frozen=True)
class Desk:
    """What every section call of one round shares."""

    question: str
    brief: str  # the question with the person's answers when asked back: what prompts show
    language: str
    client: ModelClient
    registry: SourceRegistry
    plan: LengthPlan
    slots: asyncio.Semaphore  # the run's worker slots: `max_workers` sections at once

    @property
    def limit(self) -> int:
        """The largest prompt the run may send."""
        return self.client.settings.max_context_tokens

    @property
    def title(self) -> str:
        """The report's one title: its question."""
        return report_title(self.question)

    def sources(self, ids: list[int]) -> list[SourceEvidence]:
        """The registered sources of `ids`, in that order."""
        return [self.registry.sources[i - 1] for i in ids if 0 < i <= len(self.registry.sources)]


async def _outline(desk: Desk, results: list[WorkerResult]) -> tuple[ReportOutline, Usage, str]:
    """The writer's outline made safe, or one section per subtask when it gave none (and why)."""
    plan = desk.plan
    messages = prompts.outline(
        desk.brief,
        results,
        desk.registry.sources,
        (plan.min_sections, plan.max_sections),
        desk.limit,
        language=desk.language,
    )
    try:
        outline, usage = await ask(ReportOutline, messages, role="writer", client=desk.client)
    except StructuredOutputError as error:
        return fallback_outline(desk.question, results), error.usage, str(error)[:300]
    known = {s.id for s in desk.registry.sources}
    texts = by_source(pool(desk.registry))
    return (
        shaped_outline(desk.question, outline, results, known, plan.max_sections, texts),
        usage,
        "",
    )


async def _section(
    desk: Desk,
    part: OutlineSection,
    others: list[str],
    results: list[WorkerResult],
    evidence: SectionEvidence,
    round_: int,
    *,
    count: int,
    current: ReportSection | None = None,
    review: list[str] | None = None,
    name_it: bool = False,
) -> tuple[ReportSection, Usage, str]:
    """One section written (or, given `current`, revised) from its evidence; its findings as
    notes when the writer's reply could not be used, and the problem. With `name_it`, the
    section is titled with the heading its writer gave it."""
    every = [*(desk.sources(part.source_ids) if current else []), *evidence.sources]
    every = list({s.id: s for s in every}.values())  # what it may cite: what it is shown
    if current:  # a revision keeps what the section says and adds room for what it gains
        words = revision_words(current.text, len({s.id for s in every} - set(current.source_ids)))
    else:
        words = section_words(desk.plan, count, len(every))
    cap = section_tokens(words, desk.client.settings.writer_max_tokens)
    messages = prompts.section(
        desk.brief,
        desk.title,
        part,
        others,
        results,
        evidence,
        words,
        desk.limit,
        language=desk.language,
        current=current.text if current else "",
        review=review or [],
        name_it=name_it,
    )
    own = current.text if current else ""
    async with desk.slots:
        text, usage, problem = await written_report(messages, desk.client, every, own, cap)
    if problem:  # the last good text stands; else the findings themselves, cited
        text = current.text if current else notes_section(part, results)
    shown = {s.id for s in every}
    ids = list(dict.fromkeys([*part.source_ids, *(i for i in ids_in(text) if i in shown)]))
    title = (heading_of(text) if name_it and not problem else None) or part.title
    section = ReportSection(
        **part.model_dump(exclude={"source_ids", "title"}),
        title=title,
        source_ids=ids,
        text=with_heading(text, title),
        round=round_,
    )
    return section, usage, problem


async def _framed(desk: Desk, sections: list[ReportSection]) -> tuple[str, str, Usage]:
    """The summary (its uncited sentences dropped) and the conclusion, both from the sections
    (each "" when unusable)."""
    body = "\n\n".join(s.text for s in sections)
    cited = desk.sources(sorted({i for s in sections for i in ids_in(s.text)}))
    cap = desk.client.settings.writer_max_tokens

    async def one(kind: str, words: int, sources: list[Source] | None) -> tuple[str, Usage]:
        """The summary or the conclusion ("" when unusable), within its own reply cap."""
        messages = prompts.framing(
            desk.brief, desk.title, body, kind, desk.limit, language=desk.language
        )
        text, usage, _ = await written_report(
            messages, desk.client, sources, body, section_tokens(words, cap)
        )
        return text, usage

    (summary, first), (conclusion, second) = await asyncio.gather(
        one("summary", SUMMARY_WORDS, cited), one("conclusion", CONCLUSION_WORDS, None)
    )
    return cited_only(summary), conclusion, first + second


def _titles_but(titles: list[str], title: str) -> list[str]:
    """The other sections' headings, which a section's writer leaves their subjects to."""
    return [t for t in titles if t != title]


async def first_report(desk: Desk, results: list[WorkerResult], round_: int = 1) -> Written:
    """The evidence weighed, an outline, then every section at once from its own evidence and
    what else in the pool bears on it, then the summary and conclusion."""
    weighed, usage = await weigh(desk.question, desk.language, desk.client, desk.registry)
    outline, outlined, fallback = await _outline(desk, results)
    usage += outlined
    pool_desk = EvidenceDesk(desk.registry, weighed)
    placed_conflicts = homes(outline.sections, weighed.conflicts)
    shown = [
        (part, pool_desk.for_section(index, outline.sections, placed_conflicts, most_others(part)))
        for index, part in enumerate(outline.sections)
    ]
    shown = [(part, evidence) for part, evidence in shown if evidence.sources] or shown[:1]
    titles = [part.title for part, _ in shown]
    count = len(shown)
    done = await asyncio.gather(
        *(
            _section(
                desk, part, _titles_but(titles, part.title), results, evidence, round_, count=count
            )
            for part, evidence in shown
        )
    )
    return await _composed(desk, [d[0] for d in done], done, usage, count, fallback, weighed)


async def _composed(
    desk: Desk,
    sections: list[ReportSection],
    done: list[tuple[ReportSection, Usage, str]],
    usage: Usage,
    written: int,
    fallback: str,
    weighed: WeighedEvidence,
) -> Written:
    """The report from its sections, framed; no report when no section call was usable."""
    usage = sum((cost for _, cost, _ in done), usage)
    problems = [problem for _, _, problem in done if problem]
    if done and len(problems) == len(done):  # no section could be written: only the problem
        return Written(sections, "", usage, problems[0], written, fallback, weighed)
    summary, conclusion, framing = await _framed(desk, sections)
    report = compose(desk.title, summary, sections, conclusion)
    return Written(sections, report, usage + framing, "", written, fallback, weighed)


def _review_lines(index: int, sections: list[ReportSection], review: Review) -> list[str]:
    """What the review found that section `index` must act on."""
    lines = [
        "Statement about another entity than the question names (remove it, or say whose "
        f"it is): {statement}"
        for statement in review.other_entity
        if holding(sections, statement) == index
    ]
    return lines + [
        f"A later version of this report was judged worse for: {issue}" for issue in review.issues
    ]


async def revised_report(
    desk: Desk,
    sections: list[ReportSection],
    new_results: list[WorkerResult],
    round_: int,
    review: Review | None = None,
) -> Written | None:
    """The sections that new findings, newly found disagreements or the review's findings
    touch revised, new sections for findings that fit none, the rest kept as written; None when
    there is nothing to place."""
    review = review or Review()
    touched, new = placed(sections, new_results)
    if not (touched or new or review.omitted or review.other_entity):
        return None
    weighed, usage = await weigh(desk.question, desk.language, desk.client, desk.registry)
    whole = [*sections, *new]
    whole_homes = homes(whole, weighed.conflicts)
    settled: dict[int, list[str]] = {}  # sections stating a side of a disagreement as settled
    for conflict, home in zip(weighed.conflicts, whole_homes, strict=True):
        sides = [q.source_id for q in conflict.quotes]
        if home < len(sections) and not stated(conflict, sections[home].text):
            touched[home] = list(dict.fromkeys(touched.get(home, []) + sides))
        for index, section in enumerate(sections):  # elsewhere, a side may stand as settled
            if index != home and gives_a_side(conflict, section.text):
                touched.setdefault(index, [])
                settled.setdefault(index, []).append(
                    f"The sources disagree on {conflict.subject}; the section "
                    f"'{whole[home].title}' states it: do not give a side of it here as settled."
                )
    for quote in review.omitted:
        index = fitting(sections, quote)
        touched[index] = list(dict.fromkeys([*touched.get(index, []), quote.source_id]))
    for statement in review.other_entity:
        index = holding(sections, statement)
        if index is not None:
            touched.setdefault(index, [])
    pool_desk = EvidenceDesk(desk.registry, weighed)
    count = max(1, len(sections))  # a new section gets the share each first-draft one had
    titles = [s.title for s in sections] + [p.title for p in new]
    jobs: list[tuple[OutlineSection, SectionEvidence, ReportSection | None, list[str]]] = []
    for index in sorted(touched):
        section = sections[index]
        ids = list(dict.fromkeys(section.source_ids + touched[index]))
        part = OutlineSection(**section.model_dump(include={"title", "question"}), source_ids=ids)
        evidence = pool_desk.for_section(index, whole, whole_homes, 0, ids=touched[index])
        lines = settled.get(index, []) + _review_lines(index, sections, review)
        jobs.append((part, evidence, section, lines))
    for offset, part in enumerate(new):
        evidence = pool_desk.for_section(
            len(sections) + offset, whole, whole_homes, most_others(part)
        )
        jobs.append((part, evidence, None, []))
    if not jobs:  # the review named nothing the report holds: it stands
        return Written(sections, "", usage, "", 0, "", weighed)
    calls = [
        _section(
            desk,
            part,
            _titles_but(titles, part.title),
            new_results,
            evidence,
            round_,
            count=count,
            current=current,
            review=lines,
            name_it=current is None,
        )
        for part, evidence, current, lines in jobs
    ]
    done = await asyncio.gather(*calls)
    revised = dict(zip(sorted(touched), [d[0] for d in done[: len(touched)]], strict=True))
    kept = [revised.get(i, section) for i, section in enumerate(sections)]
    added = [section for section, _, _ in done[len(touched) :]]  # notes when unwritten
    written = await _composed(desk, kept + added, list(done), usage, len(done), "", weighed)
    if written.problem:  # nothing revised: the last good report stands
        return Written(sections, "", written.usage, written.problem, len(done), "", weighed)
    return written


def desk_for(
    state: ResearchState, language: str, run: RunResources, registry: SourceRegistry
) -> Desk:
    """The shared material of a writing round, its length planned from the setting and the
    evidence."""
    plan = length_plan(run.settings.report_length, len(registry.sources))
    question = state["question"]
    brief = prompts.brief(question, state.get("clarifications"))
    return Desk(question, brief, language, run.model_client(), registry, plan, run.worker_slots)
