"""The ask form offers what this server can do, in words a person reads: only the searches it
can use, report languages by their names, and the choice to be asked back first."""

from __future__ import annotations

from bs4 import BeautifulSoup

from deep_research.settings import usable_web_providers
from deep_research.web.pages import ask_page


def options(page: str, name: str) -> list[tuple[str, str]]:
    select = BeautifulSoup(page, "html.parser").select_one(f"select#{name}")
    return [(o["value"], o.get_text()) for o in select.select("option")]


def test_the_search_list_offers_only_what_this_server_can_use(monkeypatch):
    for name in ("TAVILY_API_KEY", "BOCHA_API_KEY", "SEARXNG_URL"):
        monkeypatch.delenv(name, raising=False)
    assert usable_web_providers() == ["duckduckgo"]
    monkeypatch.setenv("BOCHA_API_KEY", "k")
    assert usable_web_providers() == ["bocha", "duckduckgo"]
    page = ask_page("en", "t", {}, {}, usable_web_providers())
    assert options(page, "search_backend") == [
        ("", "The server's choice"), ("bocha", "Bocha"), ("duckduckgo", "DuckDuckGo")
    ]  # fmt: skip
    assert BeautifulSoup(page, "html.parser").select_one("#corpus_dir") is None
    with_documents = ask_page("zh", "t", {}, {}, ["duckduckgo", "local", "hybrid"])
    assert [text for _, text in options(with_documents, "search_backend")][-2:] == [
        "服务器上的文档", "网络和服务器上的文档"
    ]  # fmt: skip
    assert BeautifulSoup(with_documents, "html.parser").select_one("#corpus_dir")


def test_report_languages_are_named_in_their_own_language():
    page = ask_page("en", "t", {}, {}, ["duckduckgo"])
    named = dict(options(page, "language"))
    assert named["zh-Hans"] == "简体中文" and named["de"] == "Deutsch" and named[""]
    assert all(text != code for code, text in named.items())
    langs = BeautifulSoup(page, "html.parser").select("select#language option[lang]")
    assert {o["lang"] for o in langs} == set(named) - {""}


def test_asking_back_is_on_unless_the_person_turned_it_off():
    soup = BeautifulSoup(ask_page("en", "t", {}, {}, ["duckduckgo"]), "html.parser")
    assert soup.select_one("#ask_back").has_attr("checked")
    posted = {"question": "q", "preset": "quick"}  # the box unticked: not sent
    again = BeautifulSoup(ask_page("en", "t", posted, {"": "x"}, ["duckduckgo"]), "html.parser")
    assert not again.select_one("#ask_back").has_attr("checked")
