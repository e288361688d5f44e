"""Writing: the first report, its revisions, and the final clean-up of citations and sources."""

from __future__ import annotations

import re

from deep_research.domain.budgets import cost_usd
from deep_research.domain.citations import clean_citations, renumber, sources_section
from deep_research.domain.language import Words, run_language, words_for
from deep_research.domain.markup import markers
from deep_research.domain.plain_text import one_line
from deep_research.domain.report_frame import nested_headings, without_empty_sections
from deep_research.domain.sources import SourceRegistry
from deep_research.nodes.keeping import keep_evidence
from deep_research.nodes.sections import Review, Written, desk_for, first_report, revised_report
from deep_research.state import ResearchState, Source, Usage, WorkerResult
from deep_research.tools.events import EarlierReportKept, ReportWritten, RunDone, emit
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.structured import settled_methods


def _language(state: ResearchState) -> str:
    return run_language(state["question"], state["settings"].language)


_URL_PHRASE = re.compile(
    r"\s*(?:for url|url:?|at)?\s*['\"<(]?(?:https?|file)://[^\s'\">)]*[^\s'\">),.;:]['\">)]?"
    r"|\s*for more information check:?\s*",
    re.IGNORECASE,
)


def plain_error(error: str) -> str:
    """An error message fit for a report: on one line, without the URLs it quoted."""
    return " ".join(_URL_PHRASE.sub("", error or "").split()).rstrip(" :;,") or "failed"


def no_evidence_report(
    question: str, results: list[WorkerResult], language: str, budget: bool = False
) -> str:
    """The honest report of a run in which no search returned anything (`budget`: because the
    run's budget ran out first, not because the searches failed)."""
    words = words_for(language)
    failures = "\n".join(f"- {r.description}: {plain_error(r.error)}" for r in results)
    lead = words.budget_before_evidence if budget else words.no_evidence
    return f"# {question}\n\n{lead}\n\n{failures}"


def notes_report(question: str, results: list[WorkerResult]) -> str:
    """A plain report straight from the workers' findings, for when the writer returns nothing."""
    sections = [f"# {question}"]
    for result in results:
        lines = [f"- {f.claim} {markers(f.source_ids)}" for f in result.findings]
        sections.append(f"## {result.description}\n\n{result.summary}\n\n" + "\n".join(lines))
    return "\n\n".join(sections)


def failed_report(question: str, problem: str, results: list[WorkerResult], language: str) -> str:
    """The honest note that replaces a report the writer could not produce, with the notes."""
    notes = notes_report(question, results).split("\n\n", 1)[-1]
    head = words_for(language).writer_failed.format(problem=problem)
    return f"# {question}\n\n{head}\n\n{notes}"


def _failure_alone(report: str, problem: str, words: Words) -> str:
    """A report the writer could not make, whose notes the citation check left nothing of
    (seen with a 270M model: a finding "1" under a summary "]["), says so, where it would
    say the findings follow."""
    head = words.writer_failed.format(problem=problem)
    before, found, after = report.partition(head)
    if not problem or not found or after.strip():
        return report
    return before + words.writer_failed_alone.format(problem=problem) + after


def limitations(results: list[WorkerResult], language: str) -> str:
    """A section naming the subtopics no worker could research, and why; empty when none."""
    done = {r.description for r in results if r.status != "failed"}
    missing = {r.description: r.error for r in results if r.status == "failed"}
    lines = [
        f"- {one_line(d, 300)}: {one_line(plain_error(error), 300)}"
        for d, error in missing.items()
        if d not in done
    ]
    if not lines:
        return ""
    return f"## {words_for(language).not_researched}\n\n" + "\n".join(lines)


def _written(written: Written, round_: int) -> None:
    """Announce a round's report on the progress stream."""
    emit(
        ReportWritten(
            round=round_,
            chars=len(written.report),
            problem=written.problem,
            sections=len(written.sections),
            written=written.written,
            outline_fallback=written.outline_fallback,
        )
    )


async def synthesize(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Write the first report, section by section, from every worker's findings, citing
    run-wide source ids."""
    registry = SourceRegistry(state["worker_results"])
    results, _ = registry.from_round(1)
    if not registry.sources:  # nothing to write from: say why, by what stopped the searches
        spent = runs.for_step(state).budget_spent()
        report = no_evidence_report(state["question"], results, _language(state), spent)
        return {
            "report": report,
            "iteration": 1,
            "stop_reason": "budget" if spent else "no_evidence",
        }
    desk = desk_for(state, _language(state), runs.for_step(state), registry)
    written = await first_report(desk, results)
    report = written.report or failed_report(
        state["question"], written.problem, results, _language(state)
    )
    _written(written, 1)
    return {
        "report": report,
        "report_round": 1,
        "iteration": 1,
        "usage": written.usage,
        "report_problem": written.problem,
        "sections": written.sections if written.report else [],
        "weighed": written.weighed,
    }


async def refine_report(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Revise the report with the gap round's research and what the last review found: only
    the sections they touch are rewritten (new sections for findings that fit none), then the
    summary and conclusion."""
    round_ = state["iteration"] + 1
    registry = SourceRegistry(state["worker_results"])
    results, _ = registry.from_round(round_)
    desk = desk_for(state, _language(state), runs.for_step(state), registry)
    sections = state.get("sections") or []
    review = Review(
        omitted=state.get("review_omitted") or [],
        other_entity=state.get("review_other_entity") or [],
    )
    if sections:
        written = await revised_report(desk, sections, results, round_, review)
    else:  # the first report was the honest note: write one from everything found so far
        written = await first_report(desk, registry.results, round_)
    update: dict = {"iteration": round_}
    if written is not None:
        update |= {"usage": written.usage, "weighed": written.weighed}
    if written is None or not (written.report or written.problem):  # nothing new to place
        emit(ReportWritten(round=round_, chars=len(state["report"]), sections=len(sections)))
        return update
    if written.problem:  # the last good report stands; the failed revision is named, never used
        update["report_problem"] = f"revision {round_}: {written.problem}"
    else:
        update |= {
            "report": written.report,
            "report_round": round_,
            "report_problem": "",
            "sections": written.sections,
        }
    _written(written, round_)
    return update


def later_rounds(results: list[WorkerResult], after: int) -> list[int]:
    """The rounds after `after` whose workers found something citable."""
    return sorted(
        {
            r.round
            for r in results
            if r.round > after and r.status != "failed" and any(f.source_ids for f in r.findings)
        }
    )


def with_note(report: str, note: str) -> str:
    """The report with `note` in italics under its title (its first line)."""
    title, _, rest = report.partition("\n")
    return (
        f"{title}\n\n*{note}*\n\n{rest.lstrip()}"
        if title.startswith("# ")
        else f"*{note}*\n\n{report}"
    )


async def keep_best_report(state: ResearchState, *, runs: LiveRuns) -> dict:
    """The run ends with an earlier round's report, which scored higher than the last: it is
    revised with what the later rounds found (the sections their findings touch), and handed
    back unchanged only when they found nothing new. The report says which round it is."""
    best = state["best"]
    registry = SourceRegistry(state["worker_results"])
    language = _language(state)
    found = later_rounds(registry.results, best.round)
    history = state.get("quality_history") or [None]
    last = state.get("quality")
    written = None
    if found:
        later = [r for r in registry.results if r.round in found]
        desk = desk_for(state, language, runs.for_step(state), registry)
        issues = list(last.issues) if last else []
        if best.sections:
            review = Review(issues=issues)
            written = await revised_report(desk, best.sections, later, state["iteration"], review)
        else:  # an earlier report without sections: written again from everything found
            written = await first_report(desk, registry.results, state["iteration"])
    update: dict = {"usage": written.usage} if written is not None else {}
    if found and (written is None or not written.report):  # could not be revised: the last
        problem = written.problem if written is not None else "nothing could be placed"
        update["report_problem"] = (
            f"the round {best.round} report could not be revised with round "
            f"{', '.join(map(str, found))}'s findings ({problem}); the last round's is handed back"
        )
        return update
    words = words_for(language)
    score = f"{best.quality.score:g}"
    later_text = ", ".join(map(str, found))
    if written is not None:
        note = words.revised_round.format(round=best.round, score=score, later=later_text)
    else:
        note = words.kept_round.format(round=best.round, score=score)
    emit(
        EarlierReportKept(
            round=best.round,
            score=best.quality.score,
            last_round=state["iteration"],
            last_score=history[-1],
            revised_with=found,
        )
    )
    report = written.report if written is not None else best.report
    sections = written.sections if written is not None else best.sections
    return (
        update
        | {
            "report": with_note(report, note),
            "quality": best.quality,
            "report_round": best.round,
            "report_revised_with": found,
            "sections": sections,
        }
        | ({"weighed": written.weighed} if written is not None else {})
    )


async def finalize(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Keep only citations of registered sources, number them 1..N, and say why the run ended.

    The report cites its sources by number in order of first citation; `sources` lists them in
    that order, each with its run-wide `id` (the one `citations` uses) and its `number`.
    """
    registry = SourceRegistry(state.get("worker_results", []))
    language = _language(state)
    words = words_for(language)
    framed = without_empty_sections(state.get("report", ""), (words.unsupported, words.unchecked))
    framed = _failure_alone(framed, state.get("report_problem", ""), words)
    text, cited = clean_citations(nested_headings(framed), registry.sources)
    text, numbers = renumber(text, cited)
    by_id = {s.id: s for s in registry.sources}
    sources = [
        Source(
            id=i,
            number=numbers[i],
            url=by_id[i].url,
            title=by_id[i].title,
            published=by_id[i].published,
        )
        for i in cited
    ]
    sources = await keep_evidence(state, sources, runs.for_step(state), runs.evidence)
    limits = limitations(registry.results, language) if sources else ""
    report = text + (f"\n\n{limits}" if limits else "")
    report += f"\n\n{sources_section(sources, language)}\n" if sources else "\n"
    reason = state["stop_reason"]  # every way into finalize has recorded why
    emit(RunDone(stop_reason=reason, sources=len(sources), rounds=state.get("iteration", 0)))
    cost = cost_usd(state.get("usage") or Usage(), state["settings"])
    methods = settled_methods(runs.for_step(state).model_client())  # released after this node
    return {
        "report": report,
        "sources": sources,
        "stop_reason": reason,
        "cost_usd": cost,
        "report_problem": state.get("report_problem", ""),
        "structured_output": methods,
        "sources_found": len(registry.sources),
        "report_round": state.get("report_round") or state.get("iteration", 0),
        "report_revised_with": state.get("report_revised_with") or [],
    }
