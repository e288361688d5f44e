"""What a remote caller may set (issue 27): server-only settings at the operator's values, the
result validated as a whole, an empty corpus path never "here", the operator's limits as caps."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from deep_research.domain.caller_settings import CallerRefused, for_remote_caller
from deep_research.settings import Settings
from deep_research.tools.corpus import CorpusError
from deep_research.tools.local_search import LocalSearch, index_path, open_corpus

NONE = {"fetch_private_addresses": False, "mcp_config": None, "corpus_dir": None}


def test_a_caller_within_what_the_operator_allows_gets_what_it_asked():
    asked = {"max_iterations": 2, "language": "de", "search_backend": "tavily"}
    settings, dropped = for_remote_caller(asked, NONE)
    assert (settings.max_iterations, settings.language, dropped) == (2, "de", [])
    again, _ = for_remote_caller(settings, NONE)  # what a later step reads: the same settings
    assert again == settings


def test_local_search_without_the_operators_folder_is_refused_not_the_current_folder():
    """Before: `model_copy` dropped corpus_dir and kept search_backend local (never valid)."""
    for asked in (
        {"search_backend": "local", "corpus_dir": "/etc"},
        Settings(search_backend="hybrid", corpus_dir="/etc"),
    ):
        with pytest.raises(CallerRefused, match="names no corpus folder"):
            for_remote_caller(asked, NONE)


def test_the_operators_folder_is_the_one_searched_and_a_web_backend_reads_none(tmp_path):
    operator = {**NONE, "corpus_dir": str(tmp_path)}
    named, dropped = for_remote_caller({"corpus_dir": "/etc"}, operator)
    assert (named.search_backend, named.corpus_dir, dropped) == (
        "local",
        str(tmp_path),
        ["corpus_dir"],
    )
    web, _ = for_remote_caller({"search_backend": "tavily"}, operator)
    assert (web.search_backend, web.corpus_dir) == ("tavily", None)


def test_a_changed_setting_is_validated_again():
    with pytest.raises(ValidationError, match="max_workers"):
        for_remote_caller({"max_workers": 0}, NONE)
    with pytest.raises(CallerRefused, match="object"):
        for_remote_caller(["max_workers", 2], NONE)  # type: ignore[arg-type]


def test_the_operators_limits_are_ceilings():
    ceilings = {"max_iterations": 1, "max_search_calls": 2}
    settings, _ = for_remote_caller({"max_workers": 3}, NONE, ceilings=ceilings)
    assert (settings.max_iterations, settings.max_search_calls) == (1, 2)
    narrower, _ = for_remote_caller({"max_search_calls": 1}, NONE, ceilings=ceilings)
    assert narrower.max_search_calls == 1
    with pytest.raises(CallerRefused, match="max_search_calls 100000 is above"):
        for_remote_caller({"max_search_calls": 100000}, NONE, ceilings=ceilings)
    with pytest.raises(CallerRefused, match="max_search_calls None is above"):
        for_remote_caller({"max_search_calls": None}, NONE, ceilings=ceilings)
    with pytest.raises(ValueError, match="min_iterations"):  # cannot raise the cap by the floor
        for_remote_caller({"min_iterations": 7}, NONE, ceilings=ceilings)


def test_an_empty_corpus_path_is_never_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ops-notes.md").write_text("private notes beside the server\n")
    for empty in ("", None, "  "):
        with pytest.raises(CorpusError, match="no corpus folder is named"):
            open_corpus(empty)
        with pytest.raises(CorpusError, match="no corpus folder is named"):
            index_path(empty)
        with pytest.raises(CorpusError, match="no corpus folder is named"):
            asyncio.run(asyncio.to_thread(LocalSearch, empty))


def test_a_caller_names_models_of_the_servers_own_provider_only(monkeypatch):
    """`ollama:` would make the server call a local Ollama (a loopback address), `anthropic:`
    spend another key of the operator's: neither is the caller's to choose."""
    from deep_research.tools.model_names import on_the_servers_endpoint

    monkeypatch.delenv("DEEP_RESEARCH_MODEL", raising=False)
    for name in ("gpt-4.1", "openai:gpt-4.1", "qwen2.5:7b"):  # the server's endpoint
        settings, _ = for_remote_caller(
            {"writer_model": name}, NONE, model_allowed=on_the_servers_endpoint
        )
        assert settings.writer_model == name
    for field, name in (("model", "ollama:llama3"), ("reviewer_model", "anthropic:claude-x")):
        with pytest.raises(CallerRefused, match=f"{field} '{name}'"):
            for_remote_caller({field: name}, NONE, model_allowed=on_the_servers_endpoint)
    monkeypatch.setenv("DEEP_RESEARCH_MODEL", "ollama:llama3")  # an operator who serves Ollama
    assert on_the_servers_endpoint("ollama:qwen3") and not on_the_servers_endpoint("gpt-4.1")


def test_a_caller_cannot_price_its_run_under_the_operators_cost_ceiling():
    real = {"fake": {"input_per_million": 3.0, "output_per_million": 15.0}}
    free = {"fake": {"input_per_million": 0, "output_per_million": 0}}
    asked = {"model": "fake", "prices": free, "max_cost_usd": 1.0}
    ceilings = {"max_cost_usd": 1.0}
    with pytest.raises(ValueError, match="needs the operator's prices"):
        for_remote_caller(asked, NONE, ceilings=ceilings)  # before: the free prices were taken
    settings, dropped = for_remote_caller(asked, NONE, ceilings=ceilings, prices=real)
    assert settings.prices["fake"].input_per_million == 3.0 and dropped == ["prices"]
    same, dropped = for_remote_caller({"model": "fake"}, NONE, ceilings=ceilings, prices=real)
    assert (same.max_cost_usd, dropped) == (1.0, [])


def test_a_workers_page_reads_are_a_ceiling_too():
    settings, _ = for_remote_caller({"max_pages": 2}, NONE, ceilings={"max_pages": 3})
    assert settings.max_pages == 2
    with pytest.raises(CallerRefused, match="max_pages 50 is above"):
        for_remote_caller({"max_pages": 50}, NONE, ceilings={"max_pages": 3})
