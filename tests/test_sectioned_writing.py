"""Reports written section by section (issue 29): an outline, each section from its own evidence
with its own reply cap, then the summary and conclusion; a gap round rewrites only what it
touches; a run killed while writing does not pay again for the sections already written."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.domain.outline import placed, shaped_outline, with_heading
from deep_research.domain.report_length import length_plan, section_tokens, section_words
from deep_research.graph import build_graph, graph
from deep_research.nodes.writing import refine_report, synthesize
from deep_research.settings import Settings
from deep_research.state import (
    GapAnalysis,
    OutlineSection,
    ReportOutline,
    ReportSection,
    SourceEvidence,
    WorkerResult,
)

from fake_chat import Replies
from stand_ins.loopback import Reply

SETTINGS = Settings(structured_output="prompt", language="en", model="fake", structured_retries=0)
QUESTION = "How do zstd and xz compare for log archives?"
FAST = {"model_retries": 0, "search_retries": 0, "max_iterations": 1, "min_iterations": 1}


def source(n: int, text: str) -> SourceEvidence:
    return SourceEvidence(id=n, url=f"https://s{n}.example/p", title=f"Page {n}", excerpt=text)


SOURCES = [
    source(1, "zstd decompresses at 1,500 MB/s on one core."),
    source(2, "xz is single-threaded unless -T is given."),
    source(3, "xz -9 gives archives 8% smaller than zstd -19."),
    source(4, "zstd supports long-distance matching with --long."),
]


def result(subtask: int, claims: dict[int, str], round_: int = 1, what: str = "") -> WorkerResult:
    """A worker's result citing its sources by (run-wide) id."""
    return WorkerResult(
        subtask_id=subtask,
        round=round_,
        description=what or f"aspect {subtask}",
        findings=[{"claim": c, "source_ids": [i]} for i, c in claims.items()],
        summary="s",
        sources=[s for s in SOURCES if s.id in claims],
    )


SPEED = result(1, {1: "zstd decompresses at 1,500 MB/s", 2: "xz is single-threaded"}, what="speed")
SIZE = result(2, {3: "xz archives are 8% smaller", 4: "zstd has long mode"}, what="size")


# ---------------------------------------------------------------- the length setting


@pytest.mark.parametrize(
    ("setting", "sources", "sections"),
    [
        ("brief", 20, (1, 2)),
        ("standard", 20, (1, 3)),
        ("long", 20, (6, 8)),
        (3000, 20, (4, 6)),
        ("long", 4, (1, 2)),  # thin evidence: fewer sections, whatever the setting
        ("standard", 1, (1, 1)),
    ],
)
def test_sections_follow_the_setting_and_the_evidence(setting, sources, sections):
    plan = length_plan(setting, sources)
    assert (plan.min_sections, plan.max_sections) == sections


def test_a_section_gets_words_for_its_evidence_and_a_cap_under_the_setting():
    plan = length_plan("long", 20)
    assert section_words(plan, 8, 10) == 500  # its share of 4,000 words
    assert section_words(plan, 8, 1) == 300  # one source carries less: never padded
    assert section_tokens(500, 6000) == 1300
    assert section_tokens(5000, 6000) == 6000  # the writer's setting is the ceiling


def test_report_length_is_validated():
    assert Settings(report_length="1200").report_length == 1200
    with pytest.raises(ValueError, match="report_length 50 words is out of range"):
        Settings(report_length=50)
    with pytest.raises(ValueError, match="report_length"):
        Settings(report_length="huge")


# ---------------------------------------------------------------- outlines and placement


def test_an_outline_keeps_registered_sources_and_places_what_it_left_out():
    outline = ReportOutline(
        sections=[
            OutlineSection(title="Speed", question="How fast?", source_ids=[1, 99]),
            OutlineSection(title="Empty", question="?", source_ids=[98]),  # nothing registered
            OutlineSection(title="Size", question="How small are xz archives?", source_ids=[3]),
        ],
    )
    shaped = shaped_outline(QUESTION, outline, [SPEED, SIZE], {1, 2, 3, 4}, max_sections=5)
    assert [s.title for s in shaped.sections] == ["Speed", "Size"]
    assert shaped.sections[0].source_ids[0] == 1 and 99 not in shaped.sections[0].source_ids
    taken = [i for s in shaped.sections for i in s.source_ids]
    assert sorted(taken) == [1, 2, 3, 4]  # no evidence is left out


def test_an_outline_with_no_usable_section_becomes_one_per_subtask():
    outline = ReportOutline(sections=[OutlineSection(title="x", question="?", source_ids=[])])
    shaped = shaped_outline(QUESTION, outline, [SPEED, SIZE], {1, 2, 3, 4}, max_sections=5)
    assert [(s.title, s.source_ids) for s in shaped.sections] == [
        ("speed", [1, 2]),
        ("size", [3, 4]),
    ]


def test_a_gap_rounds_results_touch_the_sections_they_fit_or_open_new_ones():
    sections = [
        ReportSection(
            title="Decompression speed", question="How fast does zstd decompress?", source_ids=[1]
        ),
        ReportSection(title="Archive size", question="How small are xz archives?", source_ids=[2]),
    ]
    faster = result(
        3, {3: "zstd decompress speed doubles with threads"}, 2, "zstd decompress speed"
    )
    licence = result(4, {4: "both tools are free software"}, 2, "licences of the tools")
    touched, new = placed(sections, [faster, licence])
    assert touched == {0: [3]}
    assert [s.title for s in new] == ["licences of the tools"]


def test_a_gap_task_that_names_a_sections_subject_goes_to_that_section():
    """A gap task's long findings share little with a short heading; the task names it."""
    sections = [
        ReportSection(
            title="Measurements of the Veltrane polymer", question="Figures?", source_ids=[1]
        ),
        ReportSection(
            title="Measurements of the Quillon alloy", question="Figures?", source_ids=[2]
        ),
    ]
    claims = {n: f"Trial {n} measured a tensile modulus of {n}.{n} GPa at 23 C" for n in (5, 6)}
    further = result(5, claims, 2, "Find further measured figures for the Veltrane polymer")
    other = result(7, {7: "Mortisk ceramic holds 900 C"}, 2, "Find figures for Mortisk ceramic")
    touched, new = placed(sections, [further, other])
    assert touched == {0: [5, 6]}
    assert [s.title for s in new] == ["Find figures for Mortisk ceramic"]


def test_a_section_always_starts_with_its_own_level_two_heading():
    assert with_heading("Text [1].", "Speed") == "## Speed\n\nText [1]."
    assert with_heading("# Speed\n\nText [1].", "Speed") == "## Speed\n\nText [1]."
    assert with_heading("## Speed\n\nText [1].", "Speed") == "## Speed\n\nText [1]."


# ---------------------------------------------------------------- the writer with a fake model


def state(**extra) -> dict:
    return {
        "question": QUESTION,
        "settings": SETTINGS,
        "run_id": f"sections-{id(extra)}",
        "worker_results": [SPEED, SIZE],
        "iteration": 0,
        **extra,
    }


NOTHING_TO_WEIGH = {"disagreements": [], "set_aside": []}
OUTLINE = {
    "sections": [
        {"title": "Speed", "question": "How fast?", "source_ids": [1, 2]},
        {"title": "Size", "question": "How small?", "source_ids": [3, 4]},
    ],
}


def section_of(messages) -> str:
    return re.search(r"^Section: (.*)$", messages[-1].content, re.MULTILINE).group(1)


def own_sources(messages) -> str:
    """A section prompt's own sources (before the other sources it is offered)."""
    return messages[-1].content.split("\nSources:\n", 1)[1].split("\nOther sources", 1)[0]


def test_each_section_is_written_from_its_own_sources_then_summary_and_conclusion():
    replies = Replies()
    replies.extend(
        [
            NOTHING_TO_WEIGH,
            OUTLINE,
            "## Speed\n\nzstd decompresses at 1,500 MB/s [1]; xz is single-threaded [2].",
            "## Size\n\nxz archives are 8% smaller [3].",
            "## Summary\n\nzstd is faster [1], xz smaller [3].",
            "## Conclusion\n\nChoose by what matters.",
        ]
    )
    update = asyncio.run(synthesize(state(), runs=replies.runs))
    weighing, outline, speed, size, *framing = replies.sent
    assert "Schema name: EvidenceWeighing" in weighing[0].content
    assert "#1: zstd decompresses at 1,500 MB/s on one core." in weighing[-1].content
    assert (
        "[3] Page 3" in outline[-1].content and "Schema name: ReportOutline" in outline[0].content
    )
    assert section_of(speed) == "Speed" and section_of(size) == "Size"
    own = {
        name: set(re.findall(r"^\[(\d+)\] Page", own_sources(m), re.M))
        for name, m in [("speed", speed), ("size", size)]
    }
    assert own == {"speed": {"1", "2"}, "size": {"3", "4"}}  # its own evidence first
    assert "summary that opens" in framing[0][0].content
    assert "## Speed" in framing[0][-1].content and "## Size" in framing[0][-1].content
    report = update["report"]
    assert report.startswith(f"# {QUESTION}\n\n## Summary\n\nzstd is faster [1]")
    assert report.index("## Speed") < report.index("## Size") < report.index("## Conclusion")
    assert [s.title for s in update["sections"]] == ["Speed", "Size"]
    assert update["report_problem"] == ""


def test_an_unusable_section_keeps_its_findings_and_the_report_goes_on():
    replies = Replies()
    replies.extend(
        [
            NOTHING_TO_WEIGH,
            OUTLINE,
            "## Speed\n\nzstd decompresses at 1,500 MB/s [1].",
            "",  # Size: empty, asked again once
            "",
            "## Summary\n\nzstd is fast [1].",
            "## Conclusion\n\nDone.",
        ]
    )
    update = asyncio.run(synthesize(state(), runs=replies.runs))
    assert "- xz archives are 8% smaller [3]" in update["report"]  # the notes, cited
    assert update["report_problem"] == ""


def test_without_a_valid_outline_each_subtask_gets_a_section():
    replies = Replies()
    replies.extend(
        [
            NOTHING_TO_WEIGH,
            "not an outline",
            "## speed\n\nzstd is fast [1].",
            "## size\n\nxz is small [3].",
        ]
    )
    replies.extend(["## Summary\n\nzstd is fast [1].", "## Conclusion\n\nDone."])
    update = asyncio.run(synthesize(state(), runs=replies.runs))
    assert [s.title for s in update["sections"]] == ["speed", "size"]
    assert "## size\n\nxz is small [3]." in update["report"]


SPEED_SECTION = ReportSection(
    title="Decompression speed",
    question="How fast does zstd decompress?",
    source_ids=[1],
    text="## Decompression speed\n\nzstd decompresses at 1,500 MB/s [1].",
)


def test_a_gap_round_rewrites_only_the_sections_it_touches():
    speed = SPEED_SECTION
    size = ReportSection(
        title="Archive size",
        question="How small are xz archives?",
        source_ids=[2],
        text="## Archive size\n\nxz archives are 8% smaller [2].",
    )
    faster = result(3, {3: "zstd decompress speed with threads"}, 2, "zstd decompress speed")
    replies = Replies()
    replies.extend(
        [
            NOTHING_TO_WEIGH,
            "## Decompression speed\n\nzstd decompresses at 1,500 MB/s [1], more with threads [3].",
            "## Summary\n\nzstd is fast [1].",
            "## Conclusion\n\nDone.",
        ]
    )
    before = state(
        worker_results=[SPEED, SIZE, faster],
        iteration=1,
        report="old",
        sections=[speed, size],
        gap_analysis=GapAnalysis(gaps=[], supplementary_tasks=[]),
    )
    update = asyncio.run(refine_report(before, runs=replies.runs))
    assert len(replies.sent) == 4 and section_of(replies.sent[1]) == "Decompression speed"
    assert "Current section:" in replies.sent[1][-1].content
    assert "more with threads [3]" in update["report"]
    assert update["sections"][1] == size  # untouched: kept as written, not re-sent
    assert "xz archives are 8% smaller [2]." in update["report"]


@pytest.mark.parametrize(
    ("reply", "title"),
    [
        ("## Licensing\n\nBoth tools are free software [3].", "Licensing"),
        ("# Licensing\n\nBoth tools are free software [3].", "Licensing"),  # made level 2
        ("Both tools are free software [3].", "licences of the tools"),  # none: the task's words
    ],
)
def test_a_section_opened_for_a_gap_task_is_headed_by_its_writer(reply, title):
    """The task's words ("licences of the tools") are a research task, not a heading: the
    writer of a section the gap round opens is asked for a heading and the section takes it;
    a section that exists keeps its title."""
    speed = SPEED_SECTION
    licence = result(4, {3: "both tools are free software"}, 2, "licences of the tools")
    replies = Replies()
    replies.extend(
        [NOTHING_TO_WEIGH, reply, "## Summary\n\nzstd is fast [1].", "## Conclusion\n\nDone."]
    )
    before = state(
        worker_results=[SPEED, licence],
        iteration=1,
        report="old",
        sections=[speed],
        gap_analysis=GapAnalysis(gaps=[], supplementary_tasks=[]),
    )
    update = asyncio.run(refine_report(before, runs=replies.runs))
    asked = replies.sent[1][0].content
    assert "names what the section covers" in asked and "'## licences" not in asked
    assert [s.title for s in update["sections"]] == ["Decompression speed", title]
    assert f"## {title}\n\nBoth tools are free software [3]." in update["report"]


# ---------------------------------------------------------------- end to end, ChatOpenAI


def section_requests(chat_server) -> list[dict]:
    return [
        r["body"]
        for r in chat_server.chat_requests
        if re.search(r"^Section: ", json.dumps(r["body"]["messages"]).replace("\\n", "\n"), re.M)
    ]


@pytest.mark.parametrize(("length", "most"), [("brief", 2), ("long", 8)])
def test_the_length_setting_sets_sections_and_each_sections_cap(
    chat_server, search_server, length, most
):
    chat_server.brain.subtasks = 4
    result = asyncio.run(
        graph.ainvoke({"question": QUESTION}, context={**FAST, "report_length": length})
    )
    bodies = section_requests(chat_server)
    assert 1 <= len(bodies) <= most
    caps = {body["max_tokens"] for body in bodies}
    assert caps and max(caps) < 6000  # each section's own cap, under writer_max_tokens
    assert result["report"].count("\n## ") >= len(bodies) + 1  # sections and the sources list
    assert result["citations"] and all(c.verdict == "supported" for c in result["citations"])


def fail_once(marker: str, failed: list):
    """A fault for the chat stand-in: the first request whose body holds `marker` is refused
    (400), as a crash mid-node would leave it; `failed` records its number."""

    def fault(number, body):
        if marker in json.dumps(body) and not failed:
            failed.append(number)
            error = {"message": "bad request", "type": "invalid_request_error"}
            return Reply(400, {"error": error})
        return None

    return fault


def test_a_run_killed_while_writing_does_not_pay_again_for_written_sections(
    chat_server, search_server
):
    chat_server.brain.subtasks = 3
    failed = []

    chat_server.fault = fail_once("Section: Part 3", failed)
    saver, config = InMemorySaver(), {"configurable": {"thread_id": "killed-writer"}}
    context = {**FAST, "max_workers": 1}  # sections one at a time: parts 1 and 2 are written

    async def scenario():
        run = build_graph(saver)
        with contextlib.suppress(Exception):
            await run.ainvoke({"question": QUESTION, "settings": context}, config)
        before = len(chat_server.chat_requests)
        result = await build_graph(saver).ainvoke(None, config)
        return chat_server.chat_requests[before:], result

    again, result = asyncio.run(scenario())
    assert failed
    resent = [json.dumps(r["body"]["messages"]) for r in again]
    assert not any("Section: Part 1" in t or "Section: Part 2" in t for t in resent)
    assert not any("ReportOutline" in t for t in resent)
    assert any("Section: Part 3" in t for t in resent)
    assert "## Part 3" in result["report"]


def test_a_run_killed_after_the_weighing_does_not_send_it_again(chat_server, search_server):
    """The weighing's answer is saved as it comes back: a crash at the outline resumes there."""
    failed = []
    chat_server.fault = fail_once("ReportOutline", failed)
    saver, config = InMemorySaver(), {"configurable": {"thread_id": "killed-after-weighing"}}

    async def scenario():
        with contextlib.suppress(Exception):
            await build_graph(saver).ainvoke({"question": QUESTION, "settings": FAST}, config)
        before = len(chat_server.chat_requests)
        result = await build_graph(saver).ainvoke(None, config)
        return chat_server.chat_requests[before:], result

    again, result = asyncio.run(scenario())
    assert failed and chat_server.brain.calls["EvidenceWeighing"] == 1
    resent = [json.dumps(r["body"]) for r in again]
    assert not any("EvidenceWeighing" in t for t in resent)
    assert any("ReportOutline" in t for t in resent) and result["stop_reason"]


def test_sections_survive_the_checkpoint_serializer():
    """A resumed gap round finds the sections it revises (not blocked as an unknown type)."""
    from deep_research.tools.checkpoints import serializer

    section = ReportSection(title="Speed", question="?", source_ids=[1], text="## Speed\n\nx [1].")
    serde = serializer()
    assert serde.loads_typed(serde.dumps_typed([section])) == [section]


def test_a_local_model_writes_a_brief_report_unless_told_otherwise():
    """Each section is a call of minutes on a CPU: the local profile asks for few of them."""
    assert Settings(local_model=True).report_length == "brief"
    assert Settings(local_model=True, report_length="long").report_length == "long"


def test_the_progress_line_says_how_the_report_was_written():
    from deep_research.service.event_lines import describe
    from deep_research.tools.events import ReportWritten

    line = describe(ReportWritten(round=2, chars=900, sections=4, written=1))
    assert line == "round 2: report written (900 characters, 1 of 4 sections)"
    fallback = describe(
        ReportWritten(round=1, chars=9, sections=2, written=2, outline_fallback="x")
    )
    assert fallback.endswith("; no usable outline: one section per subtask")
