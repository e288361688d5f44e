"""Writing: the first report, its revisions, and the final clean-up of citations and sources."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage

from nodes import prompts
from nodes.events import emit
from state import ResearchState, Source, Usage, WorkerResult
from tools.budgets import cost_usd
from tools.citations import clean_citations, is_cjk, sources_section
from tools.degenerate import prose_problem
from tools.json_reply import strip_reasoning
from tools.run_resources import RunResources, resources_for
from tools.sources import SourceRegistry
from tools.structured import settled_methods, write_raw


def _run(state: ResearchState) -> RunResources:
    return resources_for(state["run_id"], state["settings"])


def no_evidence_report(question: str, results: list[WorkerResult]) -> str:
    """The honest report of a run in which no search returned anything."""
    failures = "\n".join(f"- {r.description}: {r.error}" for r in results)
    if is_cjk(question):
        return (
            f"# {question}\n\n未能收集到任何证据：所有检索均失败或没有结果，"
            f"因此无法撰写有依据的报告。\n\n{failures}"
        )
    return (
        f"# {question}\n\nNo evidence could be gathered: every search failed or returned "
        f"nothing, so no report grounded in sources can be written.\n\n{failures}"
    )


def notes_report(question: str, results: list[WorkerResult]) -> str:
    """A plain report straight from the workers' findings, for when the writer returns nothing."""
    sections = [f"# {question}"]
    for result in results:
        lines = [f"- {f.claim} " + "".join(f"[{i}]" for i in f.source_ids) for f in result.findings]
        sections.append(f"## {result.description}\n\n{result.summary}\n\n" + "\n".join(lines))
    return "\n\n".join(sections)


def failed_report(question: str, problem: str, results: list[WorkerResult]) -> str:
    """The honest note that replaces a report the writer could not produce, with the notes."""
    notes = notes_report(question, results).split("\n\n", 1)[-1]
    if is_cjk(question):
        head = f"**没有报告：写作模型的回复无法使用（{problem}）。** 以下是研究人员记录的发现。"
    else:
        head = (
            f"**No report: the writer model's reply could not be used ({problem}).** Below are "
            "the findings as the researchers recorded them."
        )
    return f"# {question}\n\n{head}\n\n{notes}"


async def written_report(
    messages: list[BaseMessage], run: RunResources, current: str = ""
) -> tuple[str, Usage, str]:
    """The writer's report, asked again once with the failure named when it is degenerate.

    Returns the report, its usage, and "" — or "", the usage, and the problem when the second
    reply is degenerate too (empty, cut off, echoing the prompt, looping): never such a reply.
    """
    usage = Usage()
    conversation = messages
    stats = run.stats.of("writer")
    for attempt in range(2):
        text, cost, finish = await write_raw(conversation, role="writer", run=run)
        usage += cost
        text = strip_reasoning(text)
        problem = prose_problem(text, finish, messages, own=current, cites=True)
        if problem is None:
            return prompts.without_fences(text), usage, ""
        stats.degenerate += 1
        emit("degenerate", role="writer", problem=problem, final=attempt == 1)
        if attempt == 0:
            stats.reasks += 1
            last = conversation[-1]
            note = HumanMessage(f"{last.text}\n\n{prompts.fix_report(problem)}")
            conversation = [*conversation[:-1], note]
    return "", usage, problem


def limitations(question: str, results: list[WorkerResult]) -> str:
    """A section naming the subtopics no worker could research, and why; empty when none."""
    done = {r.description for r in results if r.status != "failed"}
    missing = {r.description: r.error for r in results if r.status == "failed"}
    lines = [f"- {d}: {error}" for d, error in missing.items() if d not in done]
    if not lines:
        return ""
    heading = "## 未能研究的子课题" if is_cjk(question) else "## Not researched"
    return heading + "\n\n" + "\n".join(lines)


async def synthesize(state: ResearchState) -> dict:
    """Write the first report from every worker's findings, citing run-wide source ids."""
    registry = SourceRegistry(state["worker_results"])
    results, sources = registry.from_round(1)
    if not registry.sources:
        report = no_evidence_report(state["question"], results)
        return {"report": report, "iteration": 1, "stop_reason": "no_evidence"}
    limit = state["settings"].max_context_tokens
    messages = prompts.synthesize(state["question"], results, sources, limit)
    report, usage, problem = await written_report(messages, _run(state))
    report = report or failed_report(state["question"], problem, results)
    emit("report", round=1, chars=len(report), problem=problem)
    return {"report": report, "iteration": 1, "usage": usage, "report_problem": problem}


async def refine_report(state: ResearchState) -> dict:
    """Revise the report with the gap round's research: only the new findings are sent."""
    round_ = state["iteration"] + 1
    results, new_sources = SourceRegistry(state["worker_results"]).from_round(round_)
    gaps = state["gap_analysis"].gaps
    limit = state["settings"].max_context_tokens
    messages = prompts.refine(state["question"], state["report"], gaps, results, new_sources, limit)
    report, usage, problem = await written_report(messages, _run(state), state["report"])
    update = {"iteration": round_, "usage": usage}
    if problem:  # the last good report stands; the failed revision is named, never used
        problem = f"revision {round_}: {problem}"
        update["report_problem"] = problem
    else:
        update |= {"report": report, "report_problem": ""}
    emit("report", round=round_, chars=len(report or state["report"]), problem=problem)
    return update


async def finalize(state: ResearchState) -> dict:
    """Keep only citations of registered sources, list exactly those, and say why the run ended."""
    registry = SourceRegistry(state.get("worker_results", []))
    text, cited = clean_citations(state.get("report", ""), registry.sources)
    by_id = {s.id: s for s in registry.sources}
    sources = [Source(id=i, url=by_id[i].url, title=by_id[i].title) for i in sorted(cited)]
    limits = limitations(state["question"], registry.results) if sources else ""
    report = text + (f"\n\n{limits}" if limits else "")
    report += f"\n\n{sources_section(sources, state['question'])}\n" if sources else "\n"
    reason = state["stop_reason"]  # every way into finalize has recorded why
    emit("done", stop_reason=reason, sources=len(sources), rounds=state.get("iteration", 0))
    cost = cost_usd(state.get("usage") or Usage(), state["settings"])
    methods = settled_methods(resources_for(state["run_id"], state["settings"]))
    return {
        "report": report,
        "sources": sources,
        "stop_reason": reason,
        "cost_usd": cost,
        "report_problem": state.get("report_problem", ""),
        "structured_output": methods,
    }
