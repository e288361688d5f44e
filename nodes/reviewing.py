"""Reviewing: score the report, and find the gaps a further research round should fill."""

from __future__ import annotations

from collections import Counter

from deep_research.domain.best_report import best_so_far
from deep_research.domain.citations import clean_citations
from deep_research.domain.evidence import EvidenceDesk, in_report, key, shown_unused
from deep_research.domain.language import run_language
from deep_research.domain.outline import stated
from deep_research.domain.sources import SourceRegistry
from deep_research.domain.statements import cited_statements
from deep_research.domain.stop_rules import stop_reason
from deep_research.domain.weak_support import needing_evidence
from deep_research.nodes import prompts
from deep_research.nodes.planning import distinct_subtasks
from deep_research.state import (
    GapAnalysis,
    QualityAssessment,
    ResearchState,
    SourceEvidence,
    SubTask,
    Usage,
    WeighedEvidence,
)
from deep_research.tools.events import GapsAnalyzed, QualityScored, emit
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.structured import StructuredOutputError, ask


def most_cited(report: str, sources: list[SourceEvidence]) -> list[SourceEvidence]:
    """The sources the report cites, most cited first: the evidence its review reads."""
    counts = Counter(i for statement in cited_statements(report) for i in statement.source_ids)
    known = [s for s in sources if counts[s.id]]
    return sorted(known, key=lambda s: (-counts[s.id], s.id))


async def quality_check(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Score the current report against the question and the evidence (0-100): the sources it
    cites, the evidence it leaves unused, where the sources disagree; record why, and hand gap
    analysis the statements without support, the evidence the review says is missing and the
    statements about another entity."""
    registry = SourceRegistry(state["worker_results"])
    report = state["report"]
    cited = clean_citations(report, registry.sources)[1]
    limit = state["settings"].max_context_tokens
    language = run_language(state["question"], state["settings"].language)
    weak = needing_evidence(report, registry.sources)  # the cheap check, each round
    weighed = state.get("weighed") or WeighedEvidence()
    unused = shown_unused(EvidenceDesk(registry, weighed).unused(report), set(cited))
    messages = prompts.quality(
        prompts.brief(state["question"], state.get("clarifications")),
        report,
        len(cited),
        limit,
        language=language,
        evidence=most_cited(report, registry.sources),
        weak=weak,
        unused=unused,
        conflicts=weighed.conflicts,
        sources={s.id: s for s in registry.sources},
    )
    client = runs.for_step(state).model_client()
    try:
        assessment, usage = await ask(QualityAssessment, messages, role="reviewer", client=client)
    except StructuredOutputError as error:  # an unknown score: no stop rule may read it as one
        assessment, usage = None, error.usage
    score = assessment.score if assessment else None
    reason = stop_reason(  # decided now, on what this review saw, and recorded for the output
        state["iteration"],
        [*state.get("quality_history", []), score],
        assessment,
        (state.get("usage") or Usage()) + usage,
        state["settings"],
    )
    issues = assessment.issues if assessment else ["the reviewer gave no valid assessment"]
    emit(QualityScored(round=state["iteration"], score=score, issues=issues, stop_reason=reason))
    omitted = (
        [unused[n - 1] for n in assessment.omitted if 0 < n <= len(unused)] if assessment else []
    )
    other = in_report(assessment.other_entity, report) if assessment else []
    update = {
        "quality": assessment,
        "quality_history": [score],
        "usage": usage,
        "stop_reason": reason,
        "claims_needing_evidence": weak,
        "review_omitted": list({key(q): q for q in omitted}.values()),
        "review_other_entity": other,
    }
    written = state.get("report_round") or state["iteration"]  # a failed revision writes none
    sections = state.get("sections") or []
    best = best_so_far(state.get("best"), report, written, assessment, sections)
    if best is not None:
        update["best"] = best
    return update


def shape_supplementary(
    tasks: list[SubTask], researched: list[SubTask], limit: int
) -> list[SubTask]:
    """New subtasks only (not researched before), capped, numbered after the existing ones."""
    return distinct_subtasks(
        tasks,
        already=[t.description for t in researched],
        limit=limit,
        first_id=max((t.id for t in researched), default=0) + 1,
    )


def _researched(state: ResearchState) -> list[SubTask]:
    """Every subtask the run has sent a worker on so far."""
    done = list(state["plan"].subtasks)
    for result in state.get("worker_results", []):
        if result.round > 1:
            done.append(
                SubTask(
                    id=result.subtask_id,
                    description=result.description or "?",
                    search_queries=[result.description or "?"],
                    complexity="simple",
                )
            )
    return done


async def analyze_gaps(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Find what the report lacks and plan the supplementary subtasks that would fill it."""
    settings = state["settings"]
    researched = _researched(state)
    weighed = state.get("weighed") or WeighedEvidence()
    registry = SourceRegistry(state["worker_results"])
    messages = prompts.gaps(
        prompts.brief(state["question"], state.get("clarifications")),
        state["report"],
        state.get("quality"),
        [t.description for t in researched],
        settings.max_supplementary_tasks,
        settings.max_context_tokens,
        language=run_language(state["question"], settings.language),
        claims=state.get("claims_needing_evidence", []),
        update=bool(state.get("refreshed_by")),  # a watched question's next version
        omitted=state.get("review_omitted") or [],
        other_entity=state.get("review_other_entity") or [],
        conflicts=[
            c for c in weighed.conflicts if c.current is None or not stated(c, state["report"])
        ],
        sources={s.id: s for s in registry.sources},
    )
    client = runs.for_step(state).model_client()
    try:
        analysis, usage = await ask(GapAnalysis, messages, role="reviewer", client=client)
    except StructuredOutputError as error:  # no reliable gaps: finish, and say why
        emit(GapsAnalyzed(round=state["iteration"], gaps=[], tasks=[], error=str(error)))
        nothing = GapAnalysis(gaps=[], supplementary_tasks=[])
        problem = f"gap analysis failed ({error}); no further round"
        earlier = state.get("report_problem")
        return {
            "gap_analysis": nothing,
            "stop_reason": "gaps_failed",
            "usage": error.usage,
            "report_problem": f"{earlier}; {problem}" if earlier else problem,
        }
    tasks = shape_supplementary(
        analysis.supplementary_tasks, researched, settings.max_supplementary_tasks
    )
    tasks_asked = [t.description for t in tasks]
    emit(GapsAnalyzed(round=state["iteration"], gaps=analysis.gaps, tasks=tasks_asked))
    update = {"gap_analysis": analysis.model_copy(update={"supplementary_tasks": tasks})}
    if not tasks:
        update["stop_reason"] = "no_gaps"
    return {**update, "usage": usage}
