"""Evidence that reaches the reader, weighed (issue 36, items 3-5): each section draws on the
whole pool, sources that disagree meet in one section with their dates, what was set aside or
left unused is a decision someone can see, and the reviewer and gap analysis see what the report
left out."""

from __future__ import annotations

import asyncio
import re

from deep_research.domain.context import pack
from deep_research.domain.evidence import EvidenceDesk, homes, in_report, pool, resolved
from deep_research.domain.sources import SourceRegistry
from deep_research.nodes.reviewing import analyze_gaps, quality_check
from deep_research.nodes.weighing import weigh
from deep_research.nodes.writing import refine_report, synthesize
from deep_research.settings import Settings
from deep_research.state import (
    EvidenceWeighing,
    OutlineSection,
    Quote,
    ReportSection,
    SourceEvidence,
    TaskPlan,
    WeighedEvidence,
    WorkerResult,
)

from fake_chat import Replies

SETTINGS = Settings(structured_output="prompt", language="en", model="fake", structured_retries=0)
QUESTION = "How fast does zstd 1.5 decompress, and how small are its archives?"
NOTHING = {"disagreements": [], "set_aside": []}


def source(n: int, text: str, published: str = "", read: bool = False) -> SourceEvidence:
    return SourceEvidence(
        id=n,
        url=f"https://s{n}.example/p",
        title=f"Page {n}",
        excerpt=text,
        published=published,
        read=read,
    )


OLD = source(1, "zstd 1.5 decompresses at 1,100 MB/s per core.", "2021-03-02", read=True)
NEW = source(2, "zstd 1.5 decompresses at 1,500 MB/s per core.", "2024-05-10", read=True)
SIZE = source(3, "zstd 1.5 archives at level 19 are 28% of the logs' size.")
NEAR = source(4, "zstd-lite 1.5 archives are 40% of the logs' size.", read=True)
SPARE = source(5, "zstd 1.5 decompression speed holds with 8 threads.")


def result(subtask: int, claims: dict[int, str], sources, quotes=()) -> WorkerResult:
    """A worker's result citing run-wide ids (the registry keeps them: first seen, in order)."""
    return WorkerResult(
        subtask_id=subtask,
        description=f"aspect {subtask}",
        findings=[{"claim": c, "source_ids": [i]} for i, c in claims.items()],
        summary="s",
        sources=sources,
        quotes=list(quotes),
    )


SPEED = result(
    1,
    {1: "zstd decompresses at 1,100 MB/s", 2: "zstd decompresses at 1,500 MB/s"},
    [OLD, NEW],
    [Quote(source_id=1, text=OLD.excerpt), Quote(source_id=2, text=NEW.excerpt)],
)
ARCHIVES = result(
    2,
    {3: "level 19 archives are 28% of the size", 4: "archives are 40% of the size"},
    [SIZE, NEAR, SPARE],
    [Quote(source_id=4, text=NEAR.excerpt)],
)


def registry() -> SourceRegistry:
    return SourceRegistry([SPEED, ARCHIVES])


def test_pool_holds_each_quote_and_each_unread_sources_excerpt_once():
    items = pool(registry())
    assert [(q.source_id, q.text) for q in items] == [
        (1, OLD.excerpt),
        (2, NEW.excerpt),
        (3, SIZE.excerpt),
        (4, NEAR.excerpt),
        (5, SPARE.excerpt),
    ]


def test_a_weighing_reply_counts_only_what_resolves():
    items = pool(registry())
    answer = EvidenceWeighing.model_validate(
        {
            "disagreements": [
                {"subject": "speed", "items": [1, 2, 99], "current": 2, "why": "newer"},
                {"subject": "one side", "items": [3], "current": None},  # no disagreement
                {"subject": "size", "items": [3, 4], "current": 7},  # 4 is another entity
            ],
            "set_aside": [
                {"item": 4, "reason": "other_entity", "note": "zstd-lite"},
                {"item": 42, "reason": "off_topic"},
            ],
        }
    )
    weighed = resolved(answer, items)
    assert [(c.subject, [q.source_id for q in c.quotes]) for c in weighed.conflicts] == [
        ("speed", [1, 2])
    ]
    assert weighed.conflicts[0].current.source_id == 2 and weighed.conflicts[0].why == "newer"
    assert [(q.source_id, q.reason) for q in weighed.set_aside] == [(4, "other_entity")]


def conflict_weighing() -> WeighedEvidence:
    answer = {
        "disagreements": [{"subject": "decompression speed", "items": [1, 2], "current": 2}],
        "set_aside": [{"item": 4, "reason": "other_entity", "note": "zstd-lite"}],
    }
    return resolved(EvidenceWeighing.model_validate(answer), pool(registry()))


SECTIONS = [
    OutlineSection(title="History", question="What did early tests measure?", source_ids=[1]),
    OutlineSection(title="Speed", question="How fast does zstd 1.5 decompress?", source_ids=[2, 5]),
    OutlineSection(title="Size", question="How small are zstd 1.5 archives?", source_ids=[3, 4]),
]


def test_a_disagreement_goes_whole_to_one_section_and_is_hidden_from_the_others():
    weighed = conflict_weighing()
    placed = homes(SECTIONS, weighed.conflicts)
    assert placed == [1]  # Speed: its subject's words, on a tie of one source each
    desk = EvidenceDesk(registry(), weighed)
    speed = desk.for_section(1, SECTIONS, placed, 2)
    assert {s.source.id for s in speed.own} == {1, 2, 5} and speed.conflicts
    history = desk.for_section(0, SECTIONS, placed, 2)
    assert not any(s.source.id == 1 for s in history.own)  # its only quote went to Speed


def test_a_section_is_offered_other_relevant_sources_but_never_what_is_set_aside():
    desk = EvidenceDesk(registry(), conflict_weighing())
    size = desk.for_section(2, SECTIONS, homes(SECTIONS, desk.weighed.conflicts), 3)
    assert [s.source.id for s in size.own] == [3]  # zstd-lite's quote is set aside
    speed_only = [
        OutlineSection(title="Speed", question="zstd 1.5 decompress speed?", source_ids=[2])
    ]
    offered = EvidenceDesk(registry(), WeighedEvidence()).for_section(0, speed_only, [], 3)
    assert 5 in [s.source.id for s in offered.others]  # SPARE talks about decompression speed


def test_packing_skips_a_block_that_does_not_fit_and_keeps_going():
    packed = pack(["x" * 3000, "small one", "another"], 50)
    assert "small one" in packed and "another" in packed and "x" * 50 not in packed


def state(**extra) -> dict:
    return {
        "question": QUESTION,
        "settings": SETTINGS,
        "run_id": f"weighed-{id(extra)}",
        "worker_results": [SPEED, ARCHIVES],
        "iteration": 0,
        **extra,
    }


def test_the_writer_gets_both_sides_with_their_dates_and_is_told_which_is_current():
    weighing = {
        "disagreements": [
            {"subject": "decompression speed", "items": [1, 2], "current": 2, "why": "newer"}
        ],
        "set_aside": [{"item": 4, "reason": "other_entity", "note": "zstd-lite"}],
    }
    outline = {"sections": [s.model_dump() for s in SECTIONS]}
    replies = Replies()
    replies.extend(
        [
            weighing,
            outline,  # History is left with nothing: its one quote went to Speed
            "## Speed\n\nThe sources disagree: 1,100 MB/s in 2021 [1], 1,500 MB/s in 2024 [2]; "
            "the newer figure is current [2].",
            "## Size\n\nLevel 19 archives are 28% of the size [3].",
            "## Summary\n\nzstd 1.5 decompresses at 1,500 MB/s [2]. It is widely used.",
            "## Conclusion\n\nDone.",
        ]
    )
    update = asyncio.run(synthesize(state(), runs=replies.runs))
    weigh_prompt = replies.sent[0][-1].content
    assert "[1] (2021-03-02) Page 1" in weigh_prompt and "#2: zstd 1.5 decompresses" in weigh_prompt
    speed = next(m[-1].content for m in replies.sent if "Section: Speed" in m[-1].content)
    assert "[1] (2021-03-02) Page 1" in speed and "[2] (2024-05-10) Page 2" in speed
    assert "Where the sources disagree" in speed and "Current: [2], newer." in speed
    size = next(m[-1].content for m in replies.sent if "Section: Size" in m[-1].content)
    assert "zstd-lite" not in size  # set aside: another entity
    assert "Where the sources disagree" not in size and "1,100 MB/s" not in size
    assert [s.title for s in update["sections"]] == ["Speed", "Size"]
    assert update["weighed"].conflicts[0].current.source_id == 2
    assert update["report"].startswith(f"# {QUESTION}\n\n## Summary\n\nzstd 1.5 decompresses")
    assert "widely used" not in update["report"]  # the summary keeps its cited sentences only


def test_the_reviewer_sees_unused_evidence_and_its_omissions_reach_the_next_revision():
    report = f"# {QUESTION}\n\n## Speed\n\nzstd 1.5 decompresses at 1,500 MB/s per core [2]."
    score = {
        "score": 60,
        "dimensions": dict.fromkeys(
            ["completeness", "accuracy", "depth", "structure", "readability", "source_quality"],
            60,
        ),
        "issues": ["archive size is missing"],
        "another_round_worthwhile": True,
        "omitted": [3, 99],
        "other_entity": ["zstd-lite archives are 40% [4].", "a statement not in the report"],
    }
    replies = Replies()
    replies.append(score)
    weighed = conflict_weighing()
    before = state(report=report, iteration=1, weighed=weighed)
    update = asyncio.run(quality_check(before, runs=replies.runs))
    sent = replies.sent[0][-1].content
    unused = sent.split("Unused evidence")[1]
    lines = re.findall(r"^#(\d+) \[(\d+)\]", unused, re.M)
    assert lines == [("1", "1"), ("2", "3"), ("3", "5")]  # the old figure is unused too
    assert "zstd-lite" not in unused  # set aside by the weighing: not an omission
    assert "Where the sources disagree" in sent
    assert [q.source_id for q in update["review_omitted"]] == [5]
    assert update["review_other_entity"] == []  # neither statement is in the report

    gaps = Replies()
    gaps.append({"gaps": [], "supplementary_tasks": []})
    plan = TaskPlan.model_construct(query_type="breadth_first", subtasks=[])
    after = before | update | {"plan": plan, "review_other_entity": ["zstd-lite is fast [4]."]}
    asyncio.run(analyze_gaps(after, runs=gaps.runs))
    gap_prompt = gaps.sent[0][-1].content
    assert "Evidence the review found left out" in gap_prompt and "8 threads" in gap_prompt
    assert "Statements about another entity" in gap_prompt and "zstd-lite is fast" in gap_prompt


def written(title: str, question: str, ids: list[int], body: str) -> ReportSection:
    """A section as an earlier round wrote it."""
    return ReportSection(
        title=title, question=question, source_ids=ids, text=f"## {title}\n\n{body}"
    )


SPEED_SECTION = written(
    "Speed", "How fast does zstd 1.5 decompress?", [2], "zstd 1.5 decompresses at 1,500 MB/s [2]."
)


def test_a_revision_writes_in_what_the_review_found_missing_and_removes_another_entity():
    speed = SPEED_SECTION
    size = ReportSection(
        title="Size",
        question="How small are zstd 1.5 archives?",
        source_ids=[3, 4],
        text="## Size\n\nLevel 19 archives are 28% [3]. zstd-lite archives are 40% [4].",
    )
    replies = Replies()
    replies.extend(
        [
            NOTHING,
            "## Speed\n\nzstd 1.5 decompresses at 1,500 MB/s [2], also with 8 threads [5].",
            "## Size\n\nLevel 19 archives are 28% [3].",
            "## Summary\n\nzstd 1.5 decompresses at 1,500 MB/s [2].",
            "## Conclusion\n\nDone.",
        ]
    )
    before = state(
        iteration=1,
        report="old",
        sections=[speed, size],
        review_omitted=[Quote(source_id=5, text=SPARE.excerpt)],
        review_other_entity=["zstd-lite archives are 40% [4]."],
    )
    update = asyncio.run(refine_report(before, runs=replies.runs))
    prompts = [m[-1].content for m in replies.sent]
    speed_prompt = next(p for p in prompts if "Section: Speed" in p)
    assert "8 threads" in speed_prompt  # the omitted evidence, in the section it fits
    size_prompt = next(p for p in prompts if "Section: Size" in p)
    assert "Statement about another entity than the question names" in size_prompt
    assert "zstd-lite archives are 40% [4]." in size_prompt
    assert "with 8 threads [5]" in update["report"] and "zstd-lite" not in update["report"]


def test_statements_a_reviewer_copied_resolve_only_when_the_report_holds_them():
    report = "# Q\n\nzstd-lite archives are 40% of the size [4]. Other text [1]."
    found = in_report(["zstd-lite archives are 40% of the size.", "made up claim"], report)
    assert found == ["zstd-lite archives are 40% of the size."]


def test_a_pool_too_large_for_one_prompt_is_weighed_with_related_items_together():
    from deep_research.domain.evidence import related_order
    from deep_research.nodes.weighing import _batches

    filler = [
        source(
            10 + n, f"Site {n} of the survey reports its staff, rooms and opening hours in full."
        )
        for n in range(12)
    ]
    rivals = [
        source(30, "The gel time of the Zerapine resin is 37.5 min in the cure study."),
        source(31, "The gel time of the Zerapine resin is 44.2 min in the digest's tests."),
    ]
    sources = [rivals[0], *filler, rivals[1]]
    items = [Quote(source_id=s.id, text=s.excerpt) for s in sources]
    order = related_order(items)
    assert abs(order.index(0) - order.index(len(items) - 1)) == 1  # the rivals side by side
    batches = _batches(items, sources, room=120)
    assert len(batches) > 1
    together = [b for b in batches if "37.5" in "".join(b)]
    assert len(together) == 1 and "44.2" in "".join(together[0])
    numbers = sorted(int(n) for b in batches for n in re.findall(r"^#(\d+):", "\n".join(b), re.M))
    assert numbers == list(range(1, len(items) + 1))  # each item once, by its place in the pool


def test_a_disagreement_found_in_a_later_round_is_stated_and_its_stale_side_unsettled():
    history = written(
        "History",
        "What did early tests measure?",
        [1],
        "zstd 1.5 decompressed at 1,100 MB/s per core [1].",
    )
    speed = SPEED_SECTION
    licence = WorkerResult(
        subtask_id=3,
        round=2,
        description="licences of the tools",
        findings=[{"claim": "zstd is BSD licensed", "source_ids": [1]}],
        sources=[
            source(6, "zstd is dual-licensed under BSD and GPLv2.").model_copy(update={"id": 1})
        ],
    )
    weighing = {
        "disagreements": [
            {"subject": "decompression speed", "items": [1, 2], "current": 2, "why": "newer"}
        ],
        "set_aside": [],
    }
    replies = Replies()
    replies.extend(
        [
            weighing,
            "## History\n\nEarly tests were run in 2021 [1].",
            "## Speed\n\nAn earlier source gives 1,100 MB/s [1]. The sources disagree: 1,500 MB/s "
            "[2], and this newer figure is current.",
            "## licences of the tools\n\nzstd is dual-licensed under BSD and GPLv2 [6].",
            "## Summary\n\nzstd 1.5 decompresses at 1,500 MB/s [2].",
            "## Conclusion\n\nDone.",
        ]
    )
    before = state(
        worker_results=[SPEED, ARCHIVES, licence],
        iteration=1,
        report="old",
        sections=[history, speed],
    )
    update = asyncio.run(refine_report(before, runs=replies.runs))
    prompts = {re.search(r"^Section: (.*)$", m[-1].content, re.M).group(1): m[-1].content
               for m in replies.sent if "Section: " in m[-1].content}  # fmt: skip
    assert (
        "Where the sources disagree" in prompts["Speed"] and "[1] (2021-03-02)" in prompts["Speed"]
    )
    assert "the section 'Speed' states it: do not give a side of it here" in prompts["History"]
    assert "licences of the tools" in prompts
    assert "1,100 MB/s per core [1]" not in update["report"]


def test_a_weighing_that_sets_aside_most_of_the_evidence_is_not_trusted():
    """Gemma 3 270M, asked over three items, set aside all three as another entity: valid by
    the contract, and it would leave the writer nothing."""
    replies = Replies()
    everything = [{"item": n, "reason": "other_entity"} for n in range(1, 6)]
    replies.append({"disagreements": [], "set_aside": everything})

    async def weighed():
        client = replies.runs.for_step({"run_id": "most", "settings": SETTINGS}).model_client()
        return await weigh(QUESTION, "en", client, registry())

    found, _ = asyncio.run(weighed())
    assert found.set_aside == []
    replies.append({"disagreements": [], "set_aside": everything[3:4]})  # zstd-lite alone
    found, _ = asyncio.run(weighed())
    assert [q.source_id for q in found.set_aside] == [4]
