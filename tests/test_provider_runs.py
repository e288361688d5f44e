"""Whole runs through the CLI on each web provider's stand-in; citations resolve to its URLs."""

from __future__ import annotations

import asyncio
import json
import os
import re

import pytest

from cli.main import main
from graph import graph
from nodes.prompts import data_section


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
    assert {s["id"] for s in record["sources"]} == cited  # the list is exactly the cited ones
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


def test_a_rejected_bocha_key_is_named_in_the_report(chat_server, bocha_server, store, monkeypatch):
    monkeypatch.setenv("BOCHA_API_KEY", "sk-revoked-key-0000")
    assert run("Compare zstd and xz", "--search", "bocha", "--output", "r.md", "--quiet") == 0
    report = (store / "r.md").read_text()
    assert "bad key for bocha (HTTP 401: Invalid API KEY)" in report
    assert "sk-revoked-key-0000" not in report


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
