"""Writing: the first report, its revisions, and the final clean-up of citations and sources."""

from __future__ import annotations

from nodes import prompts
from nodes.events import emit
from state import ResearchState, Source, Usage, WorkerResult
from tools.budgets import cost_usd
from tools.citations import clean_citations, is_cjk, sources_section
from tools.run_resources import RunResources, for_step, release_run
from tools.sources import SourceRegistry
from tools.structured import write


def _run(state: ResearchState) -> RunResources:
    """The run's live resources, its ledger at the checkpointed total."""
    return for_step(state)


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
    report, usage = await write(messages, role="writer", run=_run(state))
    report = report or notes_report(state["question"], results)
    emit("report", round=1, chars=len(report))
    return {
        "report": report,
        "iteration": 1,
        "usage": usage,
    }


async def refine_report(state: ResearchState) -> dict:
    """Revise the report with the gap round's research: only the new findings are sent."""
    round_ = state["iteration"] + 1
    results, new_sources = SourceRegistry(state["worker_results"]).from_round(round_)
    gaps = state["gap_analysis"].gaps
    limit = state["settings"].max_context_tokens
    messages = prompts.refine(state["question"], state["report"], gaps, results, new_sources, limit)
    report, usage = await write(messages, role="writer", run=_run(state))
    report = report or state["report"]
    emit("report", round=round_, chars=len(report))
    return {"report": report, "iteration": round_, "usage": usage}


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
    release_run(state.get("run_id"))  # the run ends here: its cache and limits go with it
    return {"report": report, "sources": sources, "stop_reason": reason, "cost_usd": cost}
