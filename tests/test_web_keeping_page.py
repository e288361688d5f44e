"""The run page's part on keeping a report true (`web.keeping_page`), rendered without a server:
outside text stays text, every state has words in both languages, a change list shows each
section it holds."""

from __future__ import annotations

import pytest
from lxml import html as lxml_html

from deep_research.state import (
    ChangeList,
    CitedClaim,
    ClaimRecheck,
    DroppedClaim,
    FigureChange,
    Recheck,
    SourceRecheck,
)
from deep_research.tools.watches import Version, Watch
from deep_research.web.keeping_page import EN, ZH, Kept, keeping_part
from deep_research.web.pages import html_text

HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def recheck(
    statement: str = "The Zeta index is 7301.", url: str = "https://a.example/t0"
) -> Recheck:
    return Recheck(
        thread_id="web-1",
        checked="2026-12-05T07:00:00Z",
        sources=[SourceRecheck(number=1, url=url, title=HOSTILE, state="changed", status=200)],
        claims=[
            ClaimRecheck(
                statement=statement,
                number=1,
                quote=statement,
                state="quote_gone",
                verdict="unsupported",
                new_quote=f"The Zeta index is 7350. {HOSTILE}",
            ),
            ClaimRecheck(statement="Unchanged claim.", number=1, quote="x", state="unchanged"),
        ],
        model_calls=1,
        requests=1,
    )


def version(changes: ChangeList) -> Version:
    return Version(
        "web-1", 2, "web-1-v2", "web-1", 0.0, 1.0, 10, 0.0, changes.model_dump_json(), ""
    )


def watch() -> Watch:
    return Watch("web-1", "q", 7 * 86400, 1.0e9, 2, "web-1-v2")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_outside_text_is_escaped_and_every_state_has_words(lang):
    kept = Kept("web-1", recheck(statement=HOSTILE), watch(), [])
    tree = keeping_part(kept, lang, "token")
    text = html_text(tree)
    assert "<script>" not in text and "<img" not in text and "&lt;script&gt;" in text
    parsed = lxml_html.fromstring(text)
    assert not parsed.xpath("//script | //img | //*[@onerror]")
    assert parsed.xpath("//form[@action='/runs/web-1/recheck']/input[@name='csrf']/@value") == [
        "token"
    ]
    assert parsed.xpath("//form[@action='/runs/web-1/unwatch']")
    assert not parsed.xpath("//a[contains(@href, 'a.example')]")  # addresses are shown, not linked


def test_both_languages_name_the_same_things():
    assert set(EN) == set(ZH)
    for key, text in EN.items():  # the same placeholders in both
        assert sorted(part.split("}")[0] for part in text.split("{")[1:]) == sorted(
            part.split("}")[0] for part in ZH[key].split("{")[1:]
        ), key


@pytest.mark.parametrize(
    ("calls", "claims", "words"),
    [
        (1, 1, "1 cited claim, 1 request (0 not modified), 1 model call,"),
        (0, 2, "2 cited claims, 1 request (0 not modified), 0 model calls,"),
    ],
)
def test_a_recheck_summary_counts_in_words_that_agree_with_the_number(calls, claims, words):
    checked = recheck().model_copy(update={"model_calls": calls})
    checked.claims = checked.claims[:claims]
    shown = lxml_html.fromstring(html_text(keeping_part(Kept("web-1", checked), "en", "t")))
    assert words in shown.xpath("string(//*[@id='recheck-summary'])")
    zh = lxml_html.fromstring(html_text(keeping_part(Kept("web-1", checked), "zh", "t")))
    assert f"{calls} 次模型调用" in zh.xpath("string(//*[@id='recheck-summary'])")


def test_a_change_list_shows_each_of_its_sections_and_an_empty_one_says_so():
    old = CitedClaim(claim="The Zeta index is 7301.", sources=[(1, "https://a.example/t0")])
    new = CitedClaim(claim="The Zeta index is 7350.", sources=[(1, "https://a.example/t0")])
    changes = ChangeList(
        watch_id="web-1",
        version=2,
        thread_id="web-1-v2",
        previous="web-1",
        made="2026-12-05T07:00:00Z",
        changed_figures=[FigureChange(old=old, new=new, old_value="7301", new_value="7350")],
        new_findings=[CitedClaim(claim="A new finding.", sources=[(2, "https://b.example")])],
        no_longer_supported=[DroppedClaim(claim=old, why="source [3] is gone (HTTP 410)")],
    )
    shown = lxml_html.fromstring(
        html_text(keeping_part(Kept("web-1", versions=[version(changes)]), "en", "t"))
    )
    article = shown.xpath("//article[@id='version-2']")[0].text_content()
    for words in (
        "Figures that changed",
        "7301 → 7350",
        "New findings",
        "No longer supported",
        "HTTP 410",
    ):
        assert words in article
    assert shown.xpath("//article[@id='version-2']//a/@href") == ["/runs/web-1-v2"]
    assert shown.xpath("//form[@action='/runs/web-1/watch']//input[@name='every']")  # not watched
    empty = changes.model_copy(
        update={"changed_figures": [], "new_findings": [], "no_longer_supported": []}
    )
    quiet = html_text(keeping_part(Kept("web-1", versions=[version(empty)]), "en", "t"))
    assert "Nothing changed." in quiet
