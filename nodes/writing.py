"""Writing: the first report, its revisions, and the final clean-up of citations and sources."""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage, HumanMessage

from deep_research.domain.budgets import cost_usd
from deep_research.domain.citations import clean_citations, renumber, sources_section
from deep_research.domain.degenerate import prose_problem
from deep_research.domain.fences import without_fences
from deep_research.domain.json_reply import strip_reasoning
from deep_research.domain.language import is_cjk, run_language, words_for
from deep_research.domain.markup import markers
from deep_research.domain.plain_text import one_line
from deep_research.domain.sources import SourceRegistry
from deep_research.nodes import prompts
from deep_research.state import ResearchState, Source, Usage, WorkerResult
from deep_research.tools.events import ReplyDegenerate, ReportWritten, RunDone, emit
from deep_research.tools.model_client import ModelClient
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.streaming import ReplyTooLong
from deep_research.tools.structured import overlong_cost, settled_methods, write_raw


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
    if is_cjk(language):
        head = f"**没有报告：写作模型的回复无法使用（{problem}）。** 以下是研究人员记录的发现。"
    else:
        head = (
            f"**No report: the writer model's reply could not be used ({problem}).** Below are "
            "the findings as the researchers recorded them."
        )
    return f"# {question}\n\n{head}\n\n{notes}"


async def written_report(
    messages: list[BaseMessage], client: ModelClient, sources: list[Source], current: str = ""
) -> tuple[str, Usage, str]:
    """The writer's report, asked again once with the failure named when it is degenerate.

    Returns the report, its usage, and "" — or "", the usage, and the problem when the second
    reply is degenerate too (empty, cut off, echoing the prompt, looping, or citing none of
    `sources`, the ones it may cite): never such a reply.
    """
    usage = Usage()
    conversation = messages
    stats = client.stats.of("writer")
    for attempt in range(2):
        try:
            text, cost, finish = await write_raw(conversation, role="writer", client=client)
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


async def synthesize(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Write the first report from every worker's findings, citing run-wide source ids."""
    registry = SourceRegistry(state["worker_results"])
    results, sources = registry.from_round(1)
    if not registry.sources:  # nothing to write from: say why, by what stopped the searches
        spent = runs.for_step(state).budget_spent()
        report = no_evidence_report(state["question"], results, _language(state), spent)
        return {
            "report": report,
            "iteration": 1,
            "stop_reason": "budget" if spent else "no_evidence",
        }
    limit = state["settings"].max_context_tokens
    messages = prompts.synthesize(
        state["question"], results, sources, limit, language=_language(state)
    )
    client = runs.for_step(state).model_client()
    report, usage, problem = await written_report(messages, client, sources)
    report = report or failed_report(state["question"], problem, results, _language(state))
    emit(ReportWritten(round=1, chars=len(report), problem=problem))
    return {
        "report": report,
        "report_round": 1,
        "iteration": 1,
        "usage": usage,
        "report_problem": problem,
    }


async def refine_report(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Revise the report with the gap round's research: only the new findings are sent."""
    round_ = state["iteration"] + 1
    registry = SourceRegistry(state["worker_results"])
    results, new_sources = registry.from_round(round_)
    gaps = state["gap_analysis"].gaps
    limit = state["settings"].max_context_tokens
    messages = prompts.refine(
        state["question"],
        state["report"],
        gaps,
        results,
        new_sources,
        limit,
        language=_language(state),
    )
    client = runs.for_step(state).model_client()  # a revision may cite every source so far
    report, usage, problem = await written_report(
        messages, client, registry.sources, state["report"]
    )
    update = {"iteration": round_, "usage": usage}
    if problem:  # the last good report stands; the failed revision is named, never used
        problem = f"revision {round_}: {problem}"
        update["report_problem"] = problem
    else:
        update |= {"report": report, "report_round": round_, "report_problem": ""}
    emit(ReportWritten(round=round_, chars=len(report or state["report"]), problem=problem))
    return update


async def finalize(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Keep only citations of registered sources, number them 1..N, and say why the run ended.

    The report cites its sources by number in order of first citation; `sources` lists them in
    that order, each with its run-wide `id` (the one `citations` uses) and its `number`.
    """
    registry = SourceRegistry(state.get("worker_results", []))
    language = _language(state)
    text, cited = clean_citations(state.get("report", ""), registry.sources)
    text, numbers = renumber(text, cited)
    by_id = {s.id: s for s in registry.sources}
    sources = [
        Source(id=i, number=numbers[i], url=by_id[i].url, title=by_id[i].title) for i in cited
    ]
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
    }
