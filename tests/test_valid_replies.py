"""A reply the contract allows is never refused; a fake one is never accepted (issue 19, 1-3).

Every degenerate check runs over valid replies of every contract, with the prompt each contract
is really asked with: each enum value, a subtask quoting the question, a report quoting its
sources. Then the two ways a real model's wrong answer looked right: citations that resolve to
no given source, and a self-rated number out of range next to valid findings.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import typing

import pytest
from pydantic import BaseModel

from deep_research.domain.degenerate import field_problem, prose_problem
from deep_research.domain.evidence import SectionEvidence, Shown
from deep_research.evaluation import prompts as judge_prompts
from deep_research.evaluation.contracts import (
    DIMENSIONS,
    CriterionScores,
    DimensionCriteria,
    DimensionWeights,
    DistinctStatements,
    FactJudgments,
)
from deep_research.nodes import prompts
from deep_research.nodes.planning import shape_plan
from deep_research.nodes.worker_steps import report_findings
from deep_research.nodes.writing import refine_report, synthesize
from deep_research.settings import Settings
from deep_research.state import (
    Budget,
    EvidenceWeighing,
    Finding,
    GapAnalysis,
    GapCheck,
    OutlineSection,
    PairVerdicts,
    QualityAssessment,
    Quote,
    ReportOutline,
    ReportSection,
    SearchHit,
    SetAside,
    SourceEvidence,
    StatementRewrites,
    SubTask,
    TaskPlan,
    WorkerFindings,
    WorkerResult,
)
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.structured import ask, json_schema

from fake_chat import Replies

SETTINGS = Settings(structured_output="prompt", language="en", model="fake", structured_retries=1)
QUESTION = "How does zstd compare with xz for compressing large log archives?"
HITS = [
    SearchHit(
        url="https://a.example/zstd",
        title="zstd(1): Options",
        content="zstd offers a very wide range of compression and speed trade-offs, "
        "while being backed by a very fast decoder. It also offers a special mode for small "
        "data, called dictionary compression, and can create dictionaries from any sample set.",
    ),
    SearchHit(
        url="https://b.example/xz",
        title="xz(1)",
        content="xz is a general-purpose data compression tool with command line syntax "
        "similar to gzip and bzip2. The native file format is the .xz format, but the legacy "
        ".lzma format used by LZMA Utils is also supported.",
    ),
]
SOURCES = [
    SourceEvidence(id=n, url=h.url, title=h.title, excerpt=h.content) for n, h in enumerate(HITS, 1)
]
QUOTES = [Quote(source_id=s.id, text=s.excerpt) for s in SOURCES]
SUBTASK = SubTask(
    id=1, description=QUESTION, search_queries=[QUESTION], complexity="simple", perspective=""
)
RESULT = WorkerResult(
    subtask_id=1,
    description=QUESTION,
    findings=[{"claim": "zstd has a very fast decoder", "source_ids": [1]}],
    summary="zstd decodes fast; xz compresses smaller.",
    sources=SOURCES,
)


def values(annotation: object) -> tuple[str, ...]:
    """The members of a Literal type."""
    return typing.get_args(annotation)


def subtask(complexity: str, perspective: str = "") -> dict:
    """A subtask that quotes the question back as its description and only query."""
    return {
        "description": QUESTION,
        "search_queries": [QUESTION],
        "complexity": complexity,
        "perspective": perspective,
    }


def valid_replies() -> list[tuple[type[BaseModel], dict, list]]:
    """(contract, a valid reply, the prompt it answers), every enum value of every contract."""
    plan = prompts.plan(QUESTION, 5, language="en")
    findings = prompts.findings(QUESTION, SUBTASK, HITS, 8000, language="en")
    gap_check = prompts.gap_check(QUESTION, SUBTASK, HITS, 3, 8000, language="en")
    review = prompts.quality(QUESTION, "# Report\n\nzstd decodes fast [1].", 1, 8000, language="en")
    gaps = prompts.gaps(QUESTION, "# Report", None, [QUESTION], 3, 8000, language="en")
    pairs = prompts.verify_pairs([prompts.pair_block(1, "zstd decodes fast", SOURCES[0], 500)])
    judge = judge_prompts.judge_criteria(QUESTION, "insight")
    cases: list[tuple[type[BaseModel], dict, list]] = []
    complexities = values(SubTask.model_fields["complexity"].annotation)
    for query_type, complexity in itertools.product(
        values(TaskPlan.model_fields["query_type"].annotation), complexities
    ):
        reply = {"query_type": query_type, "subtasks": [subtask(complexity, "technical")]}
        cases.append((TaskPlan, reply | {"recommended_worker_count": 1}, plan))
    for complexity in complexities:
        reply = {"gaps": [QUESTION], "supplementary_tasks": [subtask(complexity)]}
        cases.append((GapAnalysis, reply, gaps))
    quote = HITS[0].content  # a finding may quote its evidence word for word
    cases.append(
        (
            WorkerFindings,
            {
                "findings": [{"claim": quote, "source_ids": [1]}],
                "summary": QUESTION,
                "gaps": [],
                "confidence": 0.8,
            },
            findings,
        )
    )
    cases.append((GapCheck, {"gaps": [QUESTION], "next_queries": [QUESTION]}, gap_check))
    outline = prompts.outline(QUESTION, [RESULT], SOURCES, (1, 3), 8000, language="en")
    section = {"title": "Speed", "question": QUESTION, "source_ids": [1]}  # may quote it
    cases.append((ReportOutline, {"sections": [section]}, outline))
    dims = dict.fromkeys(
        ["completeness", "accuracy", "depth", "structure", "readability", "source_quality"], 70
    )
    for worthwhile in (True, False):
        reply = {
            "score": 70,
            "dimensions": dims,
            "issues": [],
            "another_round_worthwhile": worthwhile,
        }
        cases.append((QualityAssessment, reply, review))
    # the reviewer names unused evidence by number and copies a statement from the report
    copied = {"omitted": [1], "other_entity": ["zstd decodes fast [1]."]}
    cases.append((QualityAssessment, reply | copied, review))
    weigh = prompts.weigh(QUESTION, prompts.weigh_blocks(QUOTES, SOURCES), 8000, language="en")
    for reason in values(SetAside.model_fields["reason"].annotation):
        reply = {
            "disagreements": [
                # a subject may quote the question; the why may quote the evidence verbatim
                {"subject": QUESTION, "items": [1, 2], "current": 2, "why": quote},
                {"subject": "dictionary compression", "items": [1, 2], "current": None},
            ],
            "set_aside": [{"item": 1, "reason": reason, "note": QUOTES[0].text}],
        }
        cases.append((EvidenceWeighing, reply, weigh))
    cases.append((EvidenceWeighing, {"disagreements": [], "set_aside": []}, weigh))
    for verdict in values(
        PairVerdicts.model_fields["verdicts"]
        .annotation.__args__[0]
        .model_fields["verdict"]
        .annotation
    ):
        reply = {"verdicts": [{"pair": 1, "verdict": verdict, "quote": quote}]}
        cases.append((PairVerdicts, reply, pairs))
    cases.append(
        (StatementRewrites, {"rewrites": [{"statement": 1, "text": f"{quote} [1]"}]}, pairs)
    )
    cases.append((DimensionWeights, {d: 0.25 for d in DIMENSIONS}, judge))
    criteria = [{"criterion": d, "explanation": QUESTION, "weight": 0.25} for d in DIMENSIONS]
    cases.append((DimensionCriteria, {"criteria": criteria}, judge))
    cases.append((CriterionScores, {"scores": [{"criterion": 1, "target_score": 5}]}, judge))
    cases.append((DistinctStatements.for_statements(1), {"keep": [1]}, judge))
    for result in ("supported", "unsupported", "unknown"):
        reply = {"judgments": [{"statement": 1, "result": result, "reason": quote}]}
        cases.append((FactJudgments.for_statements(1), reply, judge))
    return cases


CASES = valid_replies()


@pytest.mark.parametrize(
    ("contract", "reply", "prompt"),
    CASES,
    ids=[f"{c.__name__}-{json.dumps(r)[:50]}" for c, r, _ in CASES],
)
def test_no_degenerate_check_refuses_a_valid_reply(contract, reply, prompt):
    schema = json.dumps(json_schema(contract), ensure_ascii=False)
    value = contract.model_validate(reply)
    assert field_problem(value, prompt, schema) is None


def test_every_enum_value_of_every_plan_is_covered():
    # 15 characters: "straightforward" is written in the schema's description, and is the answer.
    plans = [r["query_type"] for c, r, _ in CASES if c is TaskPlan]
    assert set(plans) == {"straightforward", "breadth_first", "depth_first"}


def test_a_copied_instruction_is_still_refused():
    plan = prompts.plan(QUESTION, 5, language="en")
    schema = json.dumps(json_schema(TaskPlan))
    copied = {"description": "Web search queries to start with (2-4).", "search_queries": ["x"]}
    reply = TaskPlan.model_validate(
        {"query_type": "breadth_first", "subtasks": [copied | {"complexity": "simple"}]}
    )
    assert "copies the instructions" in field_problem(reply, plan, schema)


def test_a_sentence_of_the_schema_wrapped_in_words_of_its_own_is_refused():
    """Gemma 3 270M, through .ci/llama.sh, on a Chinese question: a finding that is a field's
    description with a frame around it. The right answers of every contract pass (above)."""
    schema = json.dumps(json_schema(WorkerFindings))
    claim = (
        "The worker found the following: 'One claim a worker found, citing the ids of the "
        "sources that support it (3): "
    )

    def findings(claim: str) -> WorkerFindings:
        found = {"claim": claim, "source_ids": [1]}
        return WorkerFindings(findings=[found], summary="zstd is faster.", gaps=[])

    assert "findings.0.claim copies the instructions" in field_problem(findings(claim), [], schema)
    assert field_problem(findings("zstd -19 compresses logs 3.2x [1]."), [], schema) is None


PART = OutlineSection(title="Speed", question="Which decodes faster?", source_ids=[1, 2])


def section_prompt() -> list:
    """What a section's writer is sent: its own notes and sources."""
    evidence = SectionEvidence([Shown(s, s.excerpt) for s in SOURCES], [], [])
    return prompts.section(
        QUESTION, "zstd and xz", PART, [], [RESULT], evidence, 300, 8000, language="en"
    )


def report_quoting(sources: list[SourceEvidence]) -> str:
    """A valid report that quotes each source at length, citing it."""
    quotes = "\n\n".join(f"> {s.excerpt} [{s.id}]" for s in sources)
    return f"# zstd and xz\n\nIn the manuals' words:\n\n{quotes}"


def test_a_report_quoting_its_sources_is_not_refused():
    prompt = section_prompt()
    assert prose_problem(report_quoting(SOURCES), "stop", prompt, sources=SOURCES) is None


def test_a_report_that_hands_back_the_source_list_is_refused():
    prompt = section_prompt()
    dump = "\n".join(f"[{s.id}] {s.title} — {s.url}\n{s.excerpt}" for s in SOURCES)
    assert "list of sources" in prose_problem(dump, "stop", prompt, sources=SOURCES)


@pytest.mark.parametrize(
    "report",
    [
        "# Notes\n\n<div>changelog</div> v1.5.6 [7] released; see [12].",  # no such sources
        "# Notes\n\nzstd is fast and xz is small.",  # no marker at all
    ],
)
def test_a_report_whose_markers_resolve_to_no_given_source_is_refused(report):
    prompt = section_prompt()
    assert "cites none of the 2 numbered sources" in prose_problem(
        report, "stop", prompt, sources=SOURCES
    )


# ---------------------------------------------------------------- with a fake model


@pytest.fixture
def replies() -> Replies:
    """A fake chat model for every role, answering from `Replies` (a node is handed its runs)."""
    return Replies()


async def planned(runs: LiveRuns, run_id: str) -> TaskPlan:
    """The planner's answer through `ask`, the way `decompose` asks it."""
    client = runs.for_step({"run_id": run_id, "settings": SETTINGS}).model_client()
    messages = prompts.plan(QUESTION, 5, language="en")
    return (await ask(TaskPlan, messages, role="planner", client=client))[0]


def test_a_straightforward_plan_is_used_at_the_first_answer(replies):
    reply = {"query_type": "straightforward", "subtasks": [subtask("simple")]}
    replies.append(reply | {"recommended_worker_count": 1})
    plan = asyncio.run(planned(replies.runs, "valid-plan"))
    assert plan.query_type == "straightforward" and len(replies.sent) == 1


def writer_state(**extra) -> dict:
    """An orchestrator's state after the first round: one worker, two sources."""
    return {
        "question": QUESTION,
        "settings": SETTINGS,
        "run_id": f"valid-{len(extra)}-{id(extra)}",
        "worker_results": [RESULT],
        "iteration": 0,
        **extra,
    }


OUTLINE = {"sections": [PART.model_dump()]}
NOTHING_TO_WEIGH = {"disagreements": [], "set_aside": []}


def test_a_report_citing_no_given_source_becomes_the_honest_note(replies):
    fake = "# Changes\n\n<li>v1.5.6</li> [7]\n\n<li>v1.5.5</li> [9]"
    replies.extend([NOTHING_TO_WEIGH, OUTLINE, fake, fake])  # asked again once, then marked
    update = asyncio.run(synthesize(writer_state(), runs=replies.runs))
    assert len(replies.sent) == 4
    assert "cites none of the 2 numbered sources" in update["report_problem"]
    assert update["report"].startswith(f"# {QUESTION}\n\n**No report")
    assert "zstd has a very fast decoder [1]" in update["report"]  # the findings are kept


def test_a_report_of_markers_and_made_up_addresses_becomes_the_honest_note(replies):
    """What the real Gemma 3 270M wrote as a whole report: markers that resolve, each before an
    address no search returned. Once the addresses go, nothing is left: not a report."""
    fake = (
        "[1] https://www.zhihu.com/question/27045839\n[2] https://www.zhihu.com/question/28501286"
    )
    replies.extend([NOTHING_TO_WEIGH, OUTLINE, fake, fake])
    update = asyncio.run(synthesize(writer_state(), runs=replies.runs))
    assert "no text of its own" in update["report_problem"]
    assert update["report"].startswith(f"# {QUESTION}\n\n**No report")


def test_a_revision_may_cite_the_earlier_rounds_sources(replies):
    found = [Finding(claim="xz compresses smaller", source_ids=[2])]
    update = {"round": 2, "subtask_id": 2, "sources": SOURCES[1:], "findings": found}
    second = RESULT.model_copy(update=update)
    old = ReportSection(**PART.model_dump(), text="## Speed\n\nzstd decodes fast [1].")
    old = old.model_copy(update={"question": QUESTION, "source_ids": [1]})
    state = writer_state(
        report="# zstd and xz\n\n## Speed\n\nzstd decodes fast [1].",
        sections=[old],
        worker_results=[RESULT, second],
        iteration=1,
        gap_analysis=GapAnalysis(gaps=[], supplementary_tasks=[]),
    )
    revised = "## Speed\n\nzstd decodes very fast [1]."  # cites a source of round 1 only
    summary = "## Summary\n\nzstd decodes very fast [1]."
    replies.extend([NOTHING_TO_WEIGH, revised, summary, "## Conclusion\n\nDone."])
    update = asyncio.run(refine_report(state, runs=replies.runs))
    assert update["report_problem"] == "" and "zstd decodes very fast [1]." in update["report"]
    assert update["report"].startswith(f"# {QUESTION}\n\n## Summary")


def worker_state() -> dict:
    return {
        "question": QUESTION,
        "subtask": SUBTASK,
        "budget": Budget(max_queries=3, max_cycles=1),
        "round": 1,
        "settings": SETTINGS,
        "run_id": "valid-worker",
        "sent_queries": [QUESTION],
        "cycles_used": 1,
        "hits": HITS,
    }


FINDINGS = [{"claim": f"claim {n}", "source_ids": [1 + n % 2]} for n in range(4)]


def test_an_out_of_range_confidence_keeps_the_findings_and_is_never_clamped(replies):
    reply = {"findings": FINDINGS, "summary": "Both.", "gaps": [], "confidence": 4}
    replies.extend([reply, reply | {"confidence": 5}])  # re-asked once, wrong again
    result = asyncio.run(report_findings(worker_state(), runs=replies.runs))["worker_results"][0]
    assert len(replies.sent) == 2 and "confidence" in replies.sent[1][-1].text
    assert result.status == "ok" and [f.claim for f in result.findings] == [
        f"claim {n}" for n in range(4)
    ]
    assert result.confidence is None  # unknown, not 1.0


def test_a_confidence_fixed_on_the_reask_is_used(replies):
    reply = {"findings": FINDINGS, "summary": "Both.", "gaps": [], "confidence": 4}
    replies.extend([reply, reply | {"confidence": 0.4}])
    result = asyncio.run(report_findings(worker_state(), runs=replies.runs))["worker_results"][0]
    assert result.confidence == 0.4 and len(result.findings) == 4


def test_a_worker_count_of_zero_keeps_the_plan(replies):
    reply = {"query_type": "breadth_first", "subtasks": [subtask("simple"), subtask("medium")]}
    reply["subtasks"][1]["description"] = "Memory use of zstd and xz"
    replies.extend([reply | {"recommended_worker_count": 0}] * 2)
    plan = asyncio.run(planned(replies.runs, "valid-count"))
    assert plan.recommended_worker_count is None and len(plan.subtasks) == 2
    assert shape_plan(plan, QUESTION, SETTINGS).recommended_worker_count == 2


def test_an_essential_field_out_of_range_still_fails_the_reply(replies):
    bad = {"findings": [], "summary": "Both.", "gaps": [], "confidence": 4}
    replies.extend([bad] * 2)
    result = asyncio.run(report_findings(worker_state(), runs=replies.runs))["worker_results"][0]
    assert result.status == "partial" and "no valid reply" in result.error
