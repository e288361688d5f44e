"""Citation verification with the stand-in model forced to each verdict."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from deep_research.nodes.verifying import verify_citations
from deep_research.settings import Settings
from deep_research.state import SourceEvidence, WorkerResult
from deep_research.tools.run_resources import LiveRuns

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
    return asyncio.run(verify_citations(state(report, **kwargs), runs=LiveRuns()))


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


def test_a_rewrite_is_kept_only_with_the_citations_its_check_confirms(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    out = verify(UNDECIDED)
    # Statement 1's rewrite copies source 3 word for word: confirmed without the model.
    assert "Brotli was designed for web fonts and HTTP compression. [3]" in out["report"]
    assert "compression of server logs" not in out["report"]
    # Statement 2's rewrite carries a comparison ("but ... longer"): the model rejects it.
    assert (
        "- xz is slower than zstd yet compresses logs more tightly. *(not supported"
        in (out["report"])
    )
    rewrites = [(c.source_id, c.verdict, c.method) for c in out["citations"] if c.rewrite]
    assert rewrites == [(3, "supported", "lexical"), (2, "unsupported", "model")]
    assert chat_server.brain.calls["StatementRewrites"] == 1
    assert chat_server.brain.calls["PairVerdicts"] == 2  # the report's pairs, then the rewrite's
    assert out["citation_precision"] == 0.0  # of the report's own citations, before repairs


def test_a_rewrite_citing_a_source_its_statement_did_not_is_marked(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    chat_server.reply_wrapper = lambda text, call: (
        text.replace("[3]", "[1]") if call.contract == "StatementRewrites" else text
    )
    out = verify("# Logs\n\nBrotli was designed for web compression of server logs [3].\n")
    assert "[1]" not in out["report"] and "*(not supported by the sources found)*" in out["report"]
    assert not [c for c in out["citations"] if c.rewrite]


def test_mixed_verdicts_keep_only_the_supporting_sources(chat_server):
    chat_server.brain.citation_verdicts = "mixed"  # pair 1 supported, 2 unsupported, 3 partial
    out = verify(UNDECIDED)
    verdicts = {c.source_id: c.verdict for c in out["citations"]}
    assert verdicts == {3: "supported", 2: "unsupported", 1: "partial"}
    assert "Brotli was designed for web compression of server logs [3]." in out["report"]
    assert "tightly [1]." in out["report"] and "[2]" not in out["report"]
    assert out["citation_precision"] == pytest.approx(1 / 3)


def test_the_lexical_pass_settles_only_close_copies(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    chat_server.brain.rewrites = False
    report = (
        "zstd level 19 compresses logs about 10x [1]. The moon is made of green cheese [2]. "
        "xz compresses the same logs about 12x but takes four times less time [2]."
    )
    out = verify(report)
    assert [(c.verdict, c.method) for c in out["citations"]] == [
        ("supported", "lexical"),
        ("unsupported", "model"),  # unrelated words are still the model's call
        ("unsupported", "model"),  # so is a near copy with a comparison in it
    ]
    assert out["citations"][0].evidence.startswith("zstd level 19 compresses logs about 10x")
    assert "10x [1]." in out["report"] and "[2]" not in out["report"]
    assert chat_server.brain.calls["PairVerdicts"] == 1  # one batch for both


@pytest.mark.parametrize(
    ("question", "report", "mark"),
    [
        (
            "比较 zstd 和 xz",
            "# 日志压缩\n\nBrotli 在服务器日志上胜过所有压缩器[3]。xz 比 zstd 慢[2]。",
            "（未经来源证实）",
        ),
        (
            "比較 zstd 與 xz",
            "# 日誌壓縮\n\nBrotli 在伺服器日誌上勝過所有壓縮器[3]。xz 比 zstd 慢[2]。",
            "（未經來源證實）",
        ),
        (
            "zstd と xz を比較して",
            "# ログ圧縮\n\nBrotli はどの圧縮器にも勝つ[3]。xz は zstd より遅い[2]。",
            "（出典では確認できません）",
        ),
        (
            "zstd와 xz를 비교해 주세요",
            "# 로그 압축\n\nBrotli가 모든 압축기를 이긴다[3]. xz는 zstd보다 느리다[2].",
            "*(찾은 출처로 뒷받침되지 않음)*",
        ),
        (
            "Vergleiche zstd und xz für Logarchive",
            "# Logs\n\nBrotli schlägt alle Kompressoren [3]. xz ist langsamer als zstd [2].",
            "*(von den gefundenen Quellen nicht belegt)*",
        ),
    ],
    ids=["zh-Hans", "zh-Hant", "ja", "ko", "de"],
)
def test_marks_are_in_the_questions_language(chat_server, question, report, mark):
    chat_server.brain.citation_verdicts = "unsupported"
    chat_server.brain.rewrites = False
    out = verify(report, question=question)
    assert ids(out["report"]) == []
    assert out["report"].count(mark) == 2
    if "未经" not in mark:
        assert "未经来源证实" not in out["report"]  # Japanese and Korean get no Chinese marks


def test_the_language_setting_wins_over_the_question(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    chat_server.brain.rewrites = False
    run = state("Brotli beats every compressor [3].", question="比较 zstd 和 xz")
    run["settings"] = Settings(model_retries=0, language="fr")
    out = asyncio.run(verify_citations(run, runs=LiveRuns()))
    assert out["report"].endswith("*(non étayé par les sources trouvées)*")


def test_a_report_without_citations_is_left_alone(chat_server):
    out = verify("# Nothing cited\n\nJust prose.")
    assert out["report"] == "# Nothing cited\n\nJust prose."
    assert out["citations"] == [] and out["citation_precision"] is None
    assert chat_server.requests == []


def test_a_checker_that_never_answers_keeps_no_unchecked_citation(chat_server):
    # JSON that breaks the contract (a reply with no JSON at all would read as a server that
    # ignores the response format, and move down a method instead)
    chat_server.reply_wrapper = lambda text, call: (
        '{"verdicts": "no"}' if call.contract == "PairVerdicts" else text
    )
    out = verify(UNDECIDED)
    assert {(c.verdict, c.method) for c in out["citations"]} == {("unsupported", "fallback")}
    assert ids(out["report"]) == []
    assert out["report"].count("*(citation could not be checked)*") == 2
    assert chat_server.brain.calls["StatementRewrites"] == 0  # a rewrite could not be checked
    assert out["usage"].llm_calls >= 3  # the asks and re-asks are counted


def test_pairs_a_reply_left_out_are_asked_again(chat_server):
    answered = []

    def drop_last(text, call):
        if call.contract != "PairVerdicts" or answered:
            return text
        answered.append(call)
        reply = json.loads(text)
        reply["verdicts"] = reply["verdicts"][:-1]
        return json.dumps(reply)

    chat_server.reply_wrapper = drop_last
    out = verify(UNDECIDED)
    assert [c.method for c in out["citations"]] == ["model", "model", "model"]
    assert chat_server.brain.calls["PairVerdicts"] == 2
    last = chat_server.chat_requests[-1]["body"]["messages"][-1]["content"]
    assert last.count("Pair ") == 1 and "Source [1]" in last


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


def test_a_marker_outside_any_statement_does_not_stay_unchecked(chat_server):
    report = "# Logs [2]\n\n[3]\n\nBrotli was designed for web compression of server logs [3].\n"
    out = verify(report)
    assert out["report"] == (
        "# Logs\n\nBrotli was designed for web compression of server logs [3]."
    )
    assert [c.source_id for c in out["citations"]] == [3]


def test_a_link_in_a_rewrite_becomes_a_citation_that_is_checked(chat_server):
    chat_server.brain.citation_verdicts = "unsupported"
    chat_server.reply_wrapper = lambda text, call: (
        text.replace(" [3]", " [web fonts](https://c.org)")
        if call.contract == "StatementRewrites"
        else text
    )
    out = verify("# Logs\n\nBrotli was designed for web compression of server logs [3].\n")
    rewrites = [(c.source_id, c.method) for c in out["citations"] if c.rewrite]
    assert rewrites == [(3, "model")]  # checked (and rejected: the stand-in says unsupported)
    assert "https://c.org" not in out["report"] and "[3]" not in out["report"]
