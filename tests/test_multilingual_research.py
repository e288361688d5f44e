"""A Chinese question over English sources, end to end through the real graph and the stand-ins.

The writer composes each sentence faithfully (in Chinese) from the English page it cites, plus a
reversed and a negated claim; the reviewer judges as a careful reader would. True citations
must survive, false ones must not, and nothing that needs a reader is settled by word overlap.
"""

from __future__ import annotations

import asyncio
import re

from deep_research.graph import graph

from citation_pairs import SOURCES

QUESTION = "比较 zstd 和 xz 在日志归档中的表现"
PAGES = {1: SOURCES[1], 2: SOURCES[3], 3: SOURCES[5], 4: SOURCES[8], 5: SOURCES[4]}
FAITHFUL = {
    1: "zstd 的压缩速度比 xz 快得多，尤其在多线程模式下。",
    2: "用 xz -9 压缩 40 GB 的日志归档耗时 6 小时，而 zstd -19 只用了 40 分钟。",
    3: "2024 年太阳能电池板价格下降了 12%，因为制造商扩大了产能。",
    4: "Rust 编译器会在编译时拒绝可能导致数据竞争的程序。",
    5: "内部集群网络应只使用 IPv4，而不是 IPv6，因为负载均衡器会丢弃 IPv6 流量。",
}
REVERSED = {1: "xz 的压缩速度比 zstd 快得多。", 5: "内部集群网络应只使用 IPv6，而不是 IPv4。"}


def page_of(url: str) -> int:
    return int(url.rsplit("/", 1)[1])


def compose(sources: list[tuple[int, str, str]]) -> str:
    """One Chinese sentence per page (last page first), citing the first source with that page."""
    first = {}
    for source_id, _, url in sources:
        first.setdefault(page_of(url), source_id)
    lines = [f"{FAITHFUL[page]}[{first[page]}]" for page in sorted(first, reverse=True)]
    lines += [f"{REVERSED[page]}[{first[page]}]" for page in sorted(REVERSED) if page in first]
    return "\n\n".join(lines)


def judge(statement: str, source: str) -> str | None:
    """The truth: a faithful sentence is supported by its page, a reversed one by none."""
    for page, sentence in FAITHFUL.items():
        if statement == sentence:
            return "supported" if PAGES[page] in source else "unsupported"
    return "unsupported" if statement in REVERSED.values() else None


def test_a_chinese_question_over_english_sources_keeps_its_true_citations(
    chat_server, search_server
):
    search_server.page_text = lambda query, n: PAGES[n]
    brain = chat_server.brain
    brain.subtasks, brain.query_type, brain.rewrites = 1, "straightforward", False
    brain.composer, brain.judge = compose, judge
    brain.on_TaskPlan = lambda call: {  # one query, so the five pages are the evidence
        "query_type": "straightforward",
        "subtasks": [
            {"description": QUESTION, "search_queries": [QUESTION], "complexity": "simple"}
        ],
        "recommended_worker_count": 1,
    }
    brain.on_WorkerFindings = lambda call: {  # the worker keeps every page it read
        "findings": [{"claim": f"发现 {i}", "source_ids": [i]} for i in call.evidence_ids()],
        "summary": "摘要。",
    }
    result = asyncio.run(
        graph.ainvoke(
            {"question": QUESTION},
            context={"max_iterations": 1, "min_iterations": 1, "model_retries": 0},
        )
    )
    report = result["report"]
    body, sources_section = report.split("## 参考来源")

    for sentence in FAITHFUL.values():  # every true citation survives
        assert re.search(re.escape(sentence) + r"\[\d+\]", body), sentence
    for sentence in REVERSED.values():  # every false one goes, and the claim is marked
        assert sentence + "（未经来源证实）" in body
    assert brain.unknown_pairs == []

    checks = result["citations"]  # the summary restates one sentence: checked again
    assert len({c.statement for c in checks}) == len(FAITHFUL) + len(REVERSED)
    assert {c.method for c in checks} == {"model"}  # Chinese against English: the model's call
    assert not any(c.verdict == "supported" for c in checks if c.statement in REVERSED.values())

    # Sources are numbered 1..N in order of first citation; the output maps them to run ids.
    sections = body.split("\n## ", 2)[2]  # after the title and the summary
    numbers = [int(n) for n in re.findall(r"\[(\d+)\]", sections)]
    assert numbers == sorted(set(numbers)) == list(range(1, len(FAITHFUL) + 1))
    listed = result["sources"]
    assert [s.number for s in listed] == list(range(1, len(listed) + 1))
    first = min(FAITHFUL, key=lambda page: sections.index(FAITHFUL[page]))
    assert page_of(listed[0].url) == first  # the first sentence's page is source 1
    by_id = {c.source_id for c in checks}
    assert {s.id for s in listed} <= by_id
    for source in listed:
        assert f"- [{source.number}] {source.title} — {source.url}" in sources_section

    # Every role was told the run's language.
    systems = [
        m["content"]
        for r in chat_server.chat_requests
        for m in r["body"]["messages"]
        if m["role"] == "system" and "You check citations" not in m["content"]
    ]
    assert systems and all("Simplified Chinese" in s for s in systems)


def test_no_evidence_leaves_no_url_fragments(chat_server, search_server):
    search_server.fail_all = True
    result = asyncio.run(
        graph.ainvoke(
            {"question": "比较 zstd 和 xz"},
            context={"max_iterations": 1, "min_iterations": 1, "search_retries": 0},
        )
    )
    report = result["report"]
    assert result["stop_reason"] == "no_evidence"
    assert "未能收集到任何证据" in report
    assert "url '" not in report.lower() and "http" not in report and "''" not in report
