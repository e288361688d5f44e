"""The sectioned writer: an outline first, then every section from its own evidence, all at
once, then the summary and the conclusion; a gap round revises only the sections it touches.

Each section is one model call with its own reply cap (`domain.report_length`). The calls are
made inside one node with `asyncio.gather`; every answered call is saved to the checkpoint as
it comes back (`tools.durable_calls`), so a run killed while writing pays again only for the
sections still in flight.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage

from deep_research.domain.degenerate import prose_problem
from deep_research.domain.fences import without_fences
from deep_research.domain.json_reply import strip_reasoning
from deep_research.domain.outline import (
    compose,
    fallback_outline,
    notes_section,
    placed,
    shaped_outline,
    with_heading,
)
from deep_research.domain.report_length import (
    LengthPlan,
    length_plan,
    section_tokens,
    section_words,
)
from deep_research.domain.sources import SourceRegistry
from deep_research.nodes import prompts
from deep_research.state import (
    OutlineSection,
    ReportOutline,
    ReportSection,
    ResearchState,
    Source,
    SourceEvidence,
    Usage,
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

    title: str
    sections: list[ReportSection]
    report: str  # "" when no section could be written
    usage: Usage
    problem: str  # "" or why no section could be written
    written: int  # sections written or revised this round
    outline_fallback: str = ""


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
    return shaped_outline(outline, results, known, plan.max_sections), usage, ""


async def _section(
    desk: Desk,
    title: str,
    part: OutlineSection,
    others: list[str],
    results: list[WorkerResult],
    round_: int,
    *,
    count: int,
    current: ReportSection | None = None,
    new_ids: list[int] | None = None,
) -> tuple[ReportSection, Usage, str]:
    """One section written (or, given `current` and `new_ids`, revised) from its own evidence;
    its findings as notes when the writer's reply could not be used, and the problem."""
    every = desk.sources(part.source_ids)
    shown = desk.sources(new_ids) if current else every
    words = section_words(desk.plan, count, len(every))
    cap = section_tokens(words, desk.client.settings.writer_max_tokens)
    messages = prompts.section(
        desk.brief,
        title,
        part,
        others,
        results,
        shown,
        words,
        desk.limit,
        language=desk.language,
        current=current.text if current else "",
    )
    own = current.text if current else ""
    async with desk.slots:
        text, usage, problem = await written_report(messages, desk.client, every, own, cap)
    if problem:  # the last good text stands; else the findings themselves, cited
        text = current.text if current else notes_section(part, results)
    section = ReportSection(**part.model_dump(), text=with_heading(text, part.title), round=round_)
    return section, usage, problem


async def _framed(desk: Desk, title: str, sections: list[ReportSection]) -> tuple[str, str, Usage]:
    """The summary and the conclusion, both from the sections (each "" when unusable)."""
    body = "\n\n".join(s.text for s in sections)
    cited = desk.sources(sorted({i for s in sections for i in s.source_ids}))
    cap = desk.client.settings.writer_max_tokens

    async def one(kind: str, words: int, sources: list[Source] | None) -> tuple[str, Usage]:
        """The summary or the conclusion ("" when unusable), within its own reply cap."""
        messages = prompts.framing(
            desk.brief, title, body, kind, desk.limit, language=desk.language
        )
        text, usage, _ = await written_report(
            messages, desk.client, sources, body, section_tokens(words, cap)
        )
        return text, usage

    (summary, first), (conclusion, second) = await asyncio.gather(
        one("summary", SUMMARY_WORDS, cited), one("conclusion", CONCLUSION_WORDS, None)
    )
    return summary, conclusion, first + second


async def first_report(desk: Desk, results: list[WorkerResult], round_: int = 1) -> Written:
    """Outline, then every section at once, then the summary and conclusion."""
    outline, usage, fallback = await _outline(desk, results)
    titles = [s.title for s in outline.sections]
    count = len(outline.sections)
    done = await asyncio.gather(
        *(
            _section(
                desk,
                outline.title,
                part,
                [t for t in titles if t != part.title],
                results,
                round_,
                count=count,
            )
            for part in outline.sections
        )
    )
    sections = [section for section, _, _ in done]
    usage = sum((cost for _, cost, _ in done), usage)
    problems = [problem for _, _, problem in done if problem]
    if len(problems) == len(done):  # no section could be written: no report, only the problem
        return Written(outline.title, sections, "", usage, problems[0], count, fallback)
    summary, conclusion, framing = await _framed(desk, outline.title, sections)
    report = compose(outline.title, summary, sections, conclusion)
    return Written(outline.title, sections, report, usage + framing, "", count, fallback)


async def revised_report(
    desk: Desk,
    title: str,
    sections: list[ReportSection],
    new_results: list[WorkerResult],
    round_: int,
) -> Written | None:
    """The sections the gap round's findings touch revised, new sections for findings that fit
    none, the rest kept as written; None when the round found nothing to place."""
    touched, new = placed(sections, new_results)
    if not touched and not new:
        return None
    parts: list[tuple[OutlineSection, ReportSection | None, list[int] | None]] = []
    for index, section in enumerate(sections):
        if index in touched:
            ids = list(dict.fromkeys(section.source_ids + touched[index]))
            parts.append((section.model_copy(update={"source_ids": ids}), section, touched[index]))
    parts += [(part, None, None) for part in new]
    count = len(sections) + len(new)
    titles = [s.title for s in sections] + [p.title for p in new]
    done = await asyncio.gather(
        *(
            _section(
                desk,
                title,
                OutlineSection(**part.model_dump(include=set(OutlineSection.model_fields))),
                [t for t in titles if t != part.title],
                new_results,
                round_,
                count=count,
                current=current,
                new_ids=ids,
            )
            for part, current, ids in parts
        )
    )
    revised = dict(zip(sorted(touched), [d[0] for d in done[: len(touched)]], strict=True))
    kept = [revised.get(i, section) for i, section in enumerate(sections)]
    added = [section for section, _, _ in done[len(touched) :]]  # notes when unwritten
    usage = sum((cost for _, cost, _ in done), Usage())
    problems = [problem for _, _, problem in done if problem]
    if len(problems) == len(done):  # nothing revised: the last good report stands
        return Written(title, sections, "", usage, problems[0], len(done))
    summary, conclusion, framing = await _framed(desk, title, kept + added)
    report = compose(title, summary, kept + added, conclusion)
    return Written(title, kept + added, report, usage + framing, "", len(done))


def desk_for(
    state: ResearchState, language: str, run: RunResources, registry: SourceRegistry
) -> Desk:
    """The shared material of a writing round, its length planned from the setting and the
    evidence."""
    plan = length_plan(run.settings.report_length, len(registry.sources))
    question = state["question"]
    brief = prompts.brief(question, state.get("clarifications"))
    return Desk(question, brief, language, run.model_client(), registry, plan, run.worker_slots)
