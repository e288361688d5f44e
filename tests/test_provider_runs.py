"""Whole runs through the CLI on each web provider's stand-in; citations resolve to its URLs."""

from __future__ import annotations

import asyncio
import json
import os
import re

import pytest

from deep_research.cli.main import main
from deep_research.domain.fences import data_section
from deep_research.graph import graph


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store" / "c.sqlite"))
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> int:
    return main(["run", *args, "--max-iterations", "1", "--min-iterations", "1"])


def returned_urls(server) -> set[str]:
    """Every URL the stand-in provider put in an answer."""
    return set(
        re.findall(r"https?://[^\s\"'<>&]+", json.dumps([r["reply"] for r in server.requests]))
    )


def cited_sources(path) -> list[str]:
    record = json.loads(path.read_text())
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", record["report"].split("## Sources")[0])}
    assert cited, record["report"]
    assert {s["number"] for s in record["sources"]} == cited  # the list is exactly the cited ones
    return [s["url"] for s in record["sources"]]


@pytest.mark.parametrize("provider", ["bocha", "searxng"])
def test_a_run_on_a_json_provider_cites_its_urls(chat_server, request, store, capsys, provider):
    server = request.getfixturevalue(f"{provider}_server")
    code = run("Compare zstd and xz", "--search", provider, "--json", "r.json", "--quiet")
    assert code == 0, capsys.readouterr().err
    urls = cited_sources(store / "r.json")
    assert set(urls) <= returned_urls(server)
    assert server.queries  # the workers' queries reached it


def test_a_run_on_duckduckgo_cites_its_urls(chat_server, duckduckgo_server, store, capsys):
    code = run("Compare zstd and xz", "--search", "duckduckgo", "--json", "r.json", "--quiet")
    assert code == 0, capsys.readouterr().err
    served = {
        duckduckgo_server.result_url(query, n)
        for query in duckduckgo_server.queries
        for n in range(1, 11)
    }
    urls = cited_sources(store / "r.json")
    assert urls and set(urls) <= served


def test_without_any_search_key_the_run_is_key_free(
    chat_server, search_server, duckduckgo_server, store, monkeypatch, capsys
):
    assert "TAVILY_API_KEY" not in os.environ  # nor any other search key (conftest)
    assert run("Compare zstd and xz", "--json", "r.json", "--quiet") == 0
    assert duckduckgo_server.queries and search_server.requests == []
    record = json.loads((store / "r.json").read_text())
    assert all(s["url"].startswith("https://example.net/") for s in record["sources"])


@pytest.mark.parametrize(
    ("args", "prepare", "message"),
    [
        (["--search", "bocha"], lambda s: None, "BOCHA_API_KEY is not set"),
        (["--search", "searxng"], lambda s: None, "SEARXNG_URL is not set"),
        (
            ["--search", "searxng"],
            lambda s: setattr(s, "json_enabled", False),
            "add `json` to `search.formats`",
        ),
        (["--search", "searxng"], lambda s: s.stop(), "searxng is not reachable"),
    ],
)
def test_provider_problems_found_before_any_model_call(
    chat_server, searxng_server, store, monkeypatch, capsys, args, prepare, message
):
    if "is not set" in message:
        monkeypatch.delenv("SEARXNG_URL")
    prepare(searxng_server)
    assert run("Compare zstd and xz", *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert chat_server.requests == []


@pytest.mark.parametrize(
    ("provider", "spoil", "message"),
    [
        (
            "bocha",
            lambda b, t, mp: mp.setenv("BOCHA_API_KEY", "sk-revoked-key-0000"),
            "bad key for bocha (HTTP 401: Invalid API KEY)",
        ),
        (
            "tavily",
            lambda b, t, mp: (
                t.bad_keys.add("tvly-revoked-key-0000")
                or mp.setenv("TAVILY_API_KEY", "tvly-revoked-key-0000")
            ),
            "bad key for tavily (HTTP 401: Unauthorized: missing or invalid API key.)",
        ),
        (
            "tavily",
            lambda b, t, mp: (
                setattr(t, "plan_used_up", True)
                or mp.setenv("TAVILY_API_KEY", "tvly-good-key-0000")
            ),
            "tavily: the key's usage limit is reached (HTTP 432",
        ),
    ],
)
def test_a_rejected_key_is_found_free_before_any_model_call(
    chat_server, bocha_server, search_server, store, monkeypatch, capsys, provider, spoil, message
):
    spoil(bocha_server, search_server, monkeypatch)
    assert run("Compare zstd and xz", "--search", provider) == 2
    err = capsys.readouterr().err
    assert message in err and "revoked-key" not in err
    assert chat_server.requests == []
    asked = bocha_server.requests if provider == "bocha" else search_server.requests
    assert [(r["method"], r["path"]) for r in asked] == [
        ("GET", "/v1/fund/remaining" if provider == "bocha" else "/usage")
    ]  # one free query, no search


def test_a_key_revoked_mid_run_is_named_in_the_report(chat_server, bocha_server, monkeypatch):
    bocha_server.key = "sk-the-key-changed"  # after any preflight: every search is refused
    context = {"search_backend": "bocha", "max_iterations": 1, "min_iterations": 1}
    result = asyncio.run(graph.ainvoke({"question": "Compare zstd and xz"}, context=context))
    assert result["stop_reason"] == "no_evidence"
    assert "bad key for bocha (HTTP 401: Invalid API KEY)" in result["report"]
    assert os.environ["BOCHA_API_KEY"] not in result["report"]


def test_search_result_pages_on_private_addresses_are_not_fetched(
    chat_server, bocha_server, page_server, store, capsys
):
    bocha_server.page_base = page_server.url  # every result points at 127.0.0.1
    args = ("--search", "bocha", "--fetch-pages", "2", "--json", "r.json", "--quiet")
    assert run("Compare zstd and xz", *args) == 0, capsys.readouterr().err
    assert page_server.served == []
    assert json.loads((store / "r.json").read_text())["sources"]


def test_fetched_pages_reach_the_model_fenced_as_data(
    chat_server, searxng_server, page_server, monkeypatch
):
    searxng_server.page_base = page_server.url
    context = {
        "search_backend": "searxng",
        "fetch_pages": 2,
        "fetch_private_addresses": True,  # the stand-in site is on loopback
        "max_iterations": 1,
        "min_iterations": 1,
    }
    result = asyncio.run(graph.ainvoke({"question": "Compare zstd and xz"}, context=context))
    assert result["sources"] and page_server.served
    prompts = [
        " ".join(str(m["content"]) for m in r["body"]["messages"])
        for r in chat_server.chat_requests
    ]
    with_page = [p for p in prompts if "11.2x" in p]
    assert with_page
    for prompt in with_page:
        for block in re.findall(r"<data>\n.*?\n</data>", prompt, re.S):
            assert block == data_section(block[len("<data>\n") : -len("\n</data>")])
        outside = re.sub(r"<data>\n.*?\n</data>", "", prompt, flags=re.S)
        assert "11.2x" not in outside  # page text only ever inside a data fence


def test_hybrid_pairs_the_folder_with_any_provider(
    chat_server, searxng_server, store, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "zstd.md").write_text("# Zstandard\n\nzstd level 19 compresses logs about 10x.\n")
    args = ("--search", "hybrid", "--corpus", str(docs), "--json", "r.json", "--quiet")
    question = "How well do compressors compress logs?"
    assert run(question, *args) == 0, capsys.readouterr().err
    urls = [s["url"] for s in json.loads((store / "r.json").read_text())["sources"]]
    assert any(u.startswith("file://") for u in urls)
    assert any(u.startswith("https://example.org/") for u in urls)  # SearXNG's, by detection
    assert searxng_server.queries
