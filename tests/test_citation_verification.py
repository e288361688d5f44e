"""Citation verification with the stand-in model forced to each verdict."""

from __future__ import annotations

import asyncio
import re

import pytest

from nodes.verifying import verify_citations
from settings import Settings
from state import SourceEvidence, WorkerResult

EXCERPTS = {
    "https://a.org": "zstd level 19 compresses logs about 10x in our benchmark of nginx logs.",
    "https://b.org": "xz compresses the same logs about 12x but takes four times longer.",
    "https://c.org": "Brotli was designed for web fonts and HTTP compression.",
}
# Statements the lexical check cannot settle (they share some words with their source, not all).
UNDECIDED = (
    "# Logs\n\n"
    "Brotli was designed for web compression of server logs [3].\n\n"
    "- xz is slower than zstd yet compresses logs more tightly [2][1].\n"
)


def state(report, question="Compare zstd and xz"):
    sources = [
        SourceEvidence(id=n, url=u, title=f"T{n}", excerpt=e)
        for n, (u, e) in enumerate(EXCERPTS.items(), 1)
    ]
    result = WorkerResult(subtask_id=1, sources=sources)
    return {
        "question": question,
        "report": report,
        "worker_results": [result],
        "settings": Settings(model_retries=0),
        "run_id": f"verify-{abs(hash(report))}",
    }


def verify(report, **kwargs):
    return asyncio.run(verify_citations(state(report, **kwargs)))


def ids(text):
    return [int(n) for n in re.findall(r"\[(\d+)\]", text)]


def test_all_supported_leaves_the_report_unchanged(chat_server):
    out = verify(UNDECIDED)
    assert out["report"] == UNDECIDED.strip()
    assert out["citation_precision"] == 1.0
    assert [(c.source_id, c.verdict, c.method) for c in out["citations"]] == [
        (3, "supported", "model"),
        (2, "supported", "model"),
        (1, "supported", "model"),
    ]
    assert all(c.evidence for c in out["citations"])
    assert chat_server.brain.calls["PairVerdicts"] == 1  # one batch


def test_all_unsupported_and_no_rewrite_marks_every_statement(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    chat_server.brain.rewrites = False
    out = verify(UNDECIDED)
    assert ids(out["report"]) == []  # no citation survives
    assert out["report"].count("*(not supported by the sources found)*") == 2
    assert out["citation_precision"] == 0.0


def test_all_unsupported_statements_are_rewritten_from_their_evidence(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    out = verify(UNDECIDED)
    assert "compression of server logs" not in out["report"]
    assert "designed for web fonts and HTTP compression. [3]" in out["report"]
    assert "- four times longer. [2]" in out["report"] or "[2]" in out["report"]
    assert chat_server.brain.calls["StatementRewrites"] == 1


def test_mixed_verdicts_keep_only_the_supporting_sources(chat_server):
    chat_server.brain.citation_verdicts = "mixed"  # pair 1 supported, 2 unsupported, 3 partial
    out = verify(UNDECIDED)
    verdicts = {c.source_id: c.verdict for c in out["citations"]}
    assert verdicts == {3: "supported", 2: "unsupported", 1: "partial"}
    assert "Brotli was designed for web compression of server logs [3]." in out["report"]
    assert "tightly [1]." in out["report"] and "[2]" not in out["report"]
    assert out["citation_precision"] == pytest.approx(1 / 3)


def test_the_lexical_check_settles_clear_cases_without_the_model(chat_server):
    report = "zstd level 19 compresses logs about 10x [1]. The moon is made of green cheese [2]."
    chat_server.brain.rewrites = False
    out = verify(report)
    assert [(c.verdict, c.method) for c in out["citations"]] == [
        ("supported", "lexical"),
        ("unsupported", "lexical"),
    ]
    assert "10x [1]." in out["report"] and "[2]" not in out["report"]
    assert chat_server.brain.calls["PairVerdicts"] == 0


def test_a_chinese_report(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    chat_server.brain.rewrites = False
    report = "# 日志压缩\n\nBrotli 在服务器日志上胜过所有压缩器[3]。xz 比 zstd 慢[2]。"
    out = verify(report, question="比较 zstd 和 xz")
    assert ids(out["report"]) == []
    assert out["report"].count("（未经来源证实）") == 2


def test_a_report_without_citations_is_left_alone(chat_server):
    out = verify("# Nothing cited\n\nJust prose.")
    assert out["report"] == "# Nothing cited\n\nJust prose."
    assert out["citations"] == [] and out["citation_precision"] is None
    assert chat_server.requests == []


def test_a_checker_that_never_answers_falls_back_to_the_words(chat_server):
    # JSON that breaks the contract (a reply with no JSON at all would read as a server that
    # ignores the response format, and move down a method instead)
    chat_server.reply_wrapper = lambda text, call: (
        '{"verdicts": "no"}' if call.contract == "PairVerdicts" else text
    )
    out = verify(UNDECIDED)
    assert {c.method for c in out["citations"]} == {"fallback"}
    assert out["usage"].llm_calls >= 3  # the asks and re-asks are counted


def test_an_unsupported_table_row_keeps_its_cells(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    report = (
        "| tool | ratio | speed |\n| --- | --- | --- |\n"
        "| xz | compresses archives tightly [2] | slower [2] |\n"
    )
    out = verify(report)
    row = out["report"].splitlines()[2]
    assert row.startswith("| xz |") and row.endswith("*(not supported by the sources found)* |")
    assert "[2]" not in row and row.count("|") == 4
    assert chat_server.brain.calls["StatementRewrites"] == 0
