"""The web form says each refusal of the run service in its own words: what this server allows,
never a command-line flag or a setting's name. Each message is made by the service itself, so a
change of its wording shows here."""

from __future__ import annotations

import re

import pytest

from deep_research.service.bad_input import BadInput
from deep_research.service.options import CorpusOutside, corpus_inside, over_a_ceiling
from deep_research.service.preflight import settings_or_explain
from deep_research.settings import Settings
from deep_research.tools.search.base import MissingCredentials, required_env
from deep_research.web.form_words import form_words

SETTING_NAME = re.compile(r"\b[a-z]+_[a-z_]+\b|--\w|\bsettings?\b|[A-Z]+_[A-Z_]+")


def said(server: dict, asked: dict) -> str:
    given = set(asked)
    message = over_a_ceiling(Settings(**server), Settings(**{**server, **asked}), given)
    assert message, (server, asked)
    return form_words(message)


@pytest.mark.parametrize(
    ("server", "asked", "words"),
    [
        ({"max_iterations": 2, "min_iterations": 1}, {"max_iterations": 5},
         "this server runs at most 2 research rounds: choose a smaller depth"),
        ({"max_search_calls": 10}, {"max_search_calls": 50},
         "this server allows at most 10 searches: ask for less"),
        ({"max_total_tokens": 1000}, {"max_total_tokens": 5000},
         "this server allows at most 1000 tokens: ask for less"),
        ({"include_domains": ["nature.com"]}, {"include_domains": ["example.com"]},
         "this server searches only nature.com: name those sites or their subdomains"),
        ({"exclude_domains": ["spam.example"]}, {"exclude_domains": []},
         "this server never searches spam.example: keep them in the list"),
        ({"time_range": "month"}, {"time_range": "year"},
         "this server uses only sources from the last month: choose that or a shorter time"),
    ],
)  # fmt: skip
def test_every_ceiling_is_said_as_what_the_server_allows(server, asked, words):
    assert said(server, asked) == words
    assert not SETTING_NAME.search(words)


def test_credentials_corpus_and_invalid_values_lose_their_flags_and_names(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    with pytest.raises(MissingCredentials) as missing:
        required_env("TAVILY_API_KEY", "to search with Tavily")
    assert form_words(str(missing.value)) == "this server has no Tavily key: choose another search"
    with pytest.raises(CorpusOutside) as outside:
        corpus_inside("docs", None)
    assert form_words(str(outside.value)) == "this server has no document folder to search"
    with pytest.raises(CorpusOutside) as outside:
        corpus_inside("../../etc", "/srv/corpus")
    assert (
        form_words(str(outside.value)) == "'../../etc' is not inside the server's document folder"
    )
    with pytest.raises(BadInput) as invalid:
        settings_or_explain({"min_iterations": 4, "max_iterations": 3})
    words = form_words(str(invalid.value))
    assert words == "the fewest rounds (4) is above the most rounds (3)"


def test_a_message_without_names_or_flags_is_kept():
    assert form_words("the question is empty") == "the question is empty"


@pytest.mark.parametrize(
    ("message", "english", "chinese"),
    [
        (({"max_iterations": 2, "min_iterations": 1}, {"max_iterations": 5}),
         "at most 2 research rounds", "最多进行 2 轮研究"),
        (({"max_search_calls": 10}, {"max_search_calls": 50}), "at most 10 searches",
         "搜索次数 10"),
        (({"time_range": "month"}, {"time_range": "year"}), "from the last month", "最近一个月"),
        ("TAVILY_API_KEY is not set: set it to search with Tavily", "no Tavily key",
         "没有 Tavily 密钥"),
        ("the question is empty", "the question is empty", "问题是空的"),
        ("the question is 9001 characters long; the limit is 8000", "9001 characters",
         "问题有 9001 个字符，上限是 8000"),
    ],
)  # fmt: skip
def test_a_chinese_page_says_the_refusals_it_knows_in_chinese(message, english, chinese):
    if isinstance(message, tuple):  # a ceiling, as the service words it
        server, asked = message
        message = over_a_ceiling(Settings(**server), Settings(**{**server, **asked}), set(asked))
    assert english in form_words(message, "en")
    said = form_words(message, "zh")
    assert chinese in said and not SETTING_NAME.search(said)


def test_a_refusal_with_no_chinese_words_is_kept_in_english_on_a_chinese_page():
    assert form_words("'x' is not a domain", "zh") == "'x' is not a domain"
