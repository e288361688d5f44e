"""A question in one language over documents in another, through the CLI (`--search local`).

The folder's index knows each document's language; the planner and the workers are told them,
and a stand-in model that answers only with what it is shown writes its queries in the
documents' language when it is told that language, else in the question's (as a real model
told nothing would). A Chinese query finds nothing in English documents; the English one
finds the fact, which reaches the Chinese report cited to the English page.
"""

from __future__ import annotations

import json
import re

import pytest

from deep_research.cli.main import main
from deep_research.tools.local_search import open_corpus

from stand_ins.chat import Brain, ChatCall
from stand_ins.tool_brain import is_worker_request

QUESTION = "奎隆合金的熔点是多少摄氏度？"
GLOSSARY = {"奎隆合金": "Quillon alloy", "熔点": "melting point", "摄氏度": "Celsius"}
FACT = "The Quillon alloy melts at 1730 degrees Celsius, the 2024 survey found."
CHINESE_FACT = "奎隆合金的熔点为 1730 摄氏度。"
_DOCUMENTS = re.compile(r"^The documents searched are in \(documents in each\): (.*)\.$", re.M)
_SOURCE = re.compile(r"^\[(\d+)\] .*? — (\S+)\n(.*?)(?=\n\n\[\d+\] |\n</data>|\Z)", re.M | re.S)


class Translator(Brain):
    """Plans, researches and writes only from what each prompt shows it."""

    def on_TaskPlan(self, call: ChatCall) -> dict:
        told = _DOCUMENTS.search(call.user)
        english = told is not None and "English" in told.group(1)
        words = [english_word for word, english_word in GLOSSARY.items() if word in QUESTION]
        queries = [" ".join(words)] if english else [QUESTION]
        return {
            "query_type": "straightforward",
            "subtasks": [
                {
                    "description": QUESTION,
                    "search_queries": queries,
                    "complexity": "simple",
                    "search_languages": ["English"] if english else [],
                }
            ],
        }

    def on_WorkerFindings(self, call: ChatCall) -> dict:
        findings = [
            {"claim": CHINESE_FACT, "source_ids": [int(n)]}
            for n, _, text in _SOURCE.findall(call.user)
            if "1730" in text
        ]
        ids = call.evidence_ids()
        return {
            "findings": findings or [{"claim": "没有发现", "source_ids": ids[:1]}],
            "summary": "摘要。",
            "gaps": [],
        }

    def on_prose(self, call: ChatCall) -> str:
        section = re.search(r"^Section: (.*)$", call.user, re.M)
        if section is None:
            return super().on_prose(call)
        sources = call.user.split("\nSources:\n", 1)[-1]
        cited = [n for n, _, text in _SOURCE.findall(sources) if "1730" in text]
        body = f"奎隆合金的熔点为 1730 摄氏度[{cited[0]}]。" if cited else "资料中没有熔点。"
        return f"## {section.group(1)}\n\n{body}"


@pytest.fixture
def english_docs(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "data" / "c.sqlite"))
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "quillon.md").write_text(
        f"# Quillon alloy\n\nThe Quillon alloy is studied by several laboratories. {FACT}\n"
    )
    (folder / "veltrane.md").write_text(
        "# Veltrane polymer\n\nVeltrane is a polymer used for seals; it softens when heated.\n"
    )
    return folder


def test_the_index_knows_its_documents_languages_and_a_query_finds_only_its_own(english_docs):
    corpus = open_corpus(english_docs)
    assert corpus.languages() == {"en": 2}
    assert corpus.search(QUESTION) == []  # a Chinese query over English documents: nothing
    (hit,) = corpus.search("Quillon alloy melting point Celsius", 1)
    assert hit.url.startswith((english_docs / "quillon.md").resolve().as_uri())


@pytest.mark.parametrize("worker_tools", ["off", "auto"])
def test_a_chinese_question_over_english_documents_finds_and_cites_the_fact(
    chat_server, english_docs, tmp_path, capsys, worker_tools
):
    brain = Translator()
    brain.judge = lambda statement, source: "supported" if "1730" in source else "unsupported"
    chat_server.brain = brain
    code = main(
        [
            "run",
            QUESTION,
            "--search",
            "local",
            "--corpus",
            str(english_docs),
            "--json",
            "run.json",
            "--quiet",
            "--max-iterations",
            "1",
            "--worker-tools",
            worker_tools,
        ]
    )
    assert code == 0, capsys.readouterr().err  # it exited 3 (no evidence) before
    record = json.loads((tmp_path / "run.json").read_text())
    body = record["report"].split("## 参考来源")[0]
    assert "1730 摄氏度[1]" in body  # the fact, in the asker's language, cited
    (source,) = record["sources"]
    assert "quillon.md" in source["url"]  # to the English page that holds it
    plans = [r for r in chat_server.chat_requests if "TaskPlan" in json.dumps(r["body"])]
    told = json.dumps(plans[0]["body"]["messages"], ensure_ascii=False)
    assert "The documents searched are in (documents in each): English (2)." in told
    if worker_tools == "auto":  # the worker's model chose its searches, told the languages
        decides = [
            r["body"]["messages"]
            for r in chat_server.chat_requests
            if is_worker_request(r["body"], json.dumps(r["body"]["messages"]))
        ]
        assert decides and "Search in: English." in json.dumps(decides[0], ensure_ascii=False)
