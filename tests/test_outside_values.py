"""One bad value from outside must not sink a run: an address that does not parse, control
characters in an address, a title or a quote. Real CLI, real Tavily client, stand-in servers."""

from __future__ import annotations

import io

import docx
import pytest

from deep_research.cli.main import main
from deep_research.domain.sources import admitted, normalize_url, parses
from deep_research.nodes.worker_steps import rank_hits
from deep_research.state import SearchHit

BROKEN = "http://[::1"
CONTROLLED = "https://example.com/ctl\x00page\x07"


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store.sqlite"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_good_addresses_parse_and_keep_their_identity():
    assert parses("https://example.com/a/") and normalize_url("HTTPS://Example.com/a/") == (
        "https://example.com/a"
    )
    assert not parses(BROKEN)
    assert normalize_url(BROKEN) == BROKEN  # its own text: comparing it never raises


def test_a_hit_whose_address_does_not_parse_is_dropped_and_the_rest_cleaned():
    hits = [
        SearchHit(url="https://example.com/good", title="Good", content="ok", score=0.9),
        SearchHit(url=BROKEN, title="Broken", content="x", score=0.8),
        SearchHit(url=CONTROLLED, title="t\x1b[31mred\x00", content="a\x07b\nc", score=0.7),
    ]
    kept, dropped = admitted(hits)
    assert [h.url for h in dropped] == [BROKEN]
    assert [h.url for h in kept] == ["https://example.com/good", "https://example.com/ctlpage"]
    assert kept[1].title == "t[31mred" and kept[1].content == "ab\nc"  # line breaks stay
    assert rank_hits(hits)[0].url == "https://example.com/good"  # a resumed state


def test_a_run_stored_with_such_a_hit_resumes_without_it():
    """State saved before the door existed: orient (the step a resume runs again) drops it."""
    import asyncio

    from deep_research.domain.plain_text import link_address
    from deep_research.nodes.worker_steps import orient

    stored = [SearchHit(url=BROKEN, title="Broken"), SearchHit(url="https://example.com/ok")]
    update = asyncio.run(orient({"hits": stored}))
    assert [h.url for h in update["hits"].value] == ["https://example.com/ok"]  # replaced
    assert link_address(BROKEN) == f"`{BROKEN}`"  # a stored source's address is shown, as text


def _hostile_search(search_server):
    """The stand-in search, its first answer carrying a broken and a controlled address."""
    answer = search_server.handle

    def hostile(path, body, headers):
        reply = answer(path, body, headers)
        results = (reply.body or {}).get("results", []) if path != "/usage" else []
        if results:
            results[0]["url"] = BROKEN
            results[1]["url"] = CONTROLLED
            results[1]["title"] = "Bell\x07 and NUL\x00 title"
            results[1]["content"] = "Quoted\x00 evidence\x07 with controls: the figure is 14."
        return reply

    search_server.handle = hostile


def test_a_run_with_a_broken_and_a_controlled_address_finishes_in_every_format(
    chat_server, search_server, store, capsys
):
    _hostile_search(search_server)
    args = ["run", "Compare zstd and xz", "--max-iterations", "1", "--min-iterations", "1"]
    outputs = ["--output", "r.md", "--output", "r.docx", "--output", "r.html"]
    assert main([*args, *outputs, "--thread-id", "hostile-values"]) == 0
    err = capsys.readouterr().err
    assert err.count(f"search hit {BROKEN!r}: its address does not parse") == 1  # once a run
    for name in ("r.md", "r.html"):
        text = (store / name).read_text(encoding="utf-8")
        assert "\x00" not in text and "\x07" not in text and "[::1" not in text
    assert "https://example.com/ctlpage" in (store / "r.md").read_text(encoding="utf-8")
    words = " ".join(p.text for p in docx.Document(str(store / "r.docx")).paragraphs)
    assert "Bell and NUL title" in words
    assert main(["export", "hostile-values", "--output", "e.docx"]) == 0
    assert docx.Document(io.BytesIO((store / "e.docx").read_bytes())).paragraphs


def test_every_format_of_a_stored_output_with_control_characters_is_clean():
    """A run stored before the door cleaned its text still exports, in every format."""
    from deep_research.export.formats import Rendering

    from report_sample import sample_facts, sample_output

    output = sample_output()
    first, *rest = output["sources"]
    output["sources"] = [first.model_copy(update={"url": first.url + "\x00x\x07"}), *rest]
    output["report"] = output["report"].replace("\n\n", "\n\nBell\x07 NUL\x00 here.\n\n", 1)
    rendering = Rendering(output, sample_facts())
    for format in ("md", "html"):
        data = rendering.render(format)
        assert b"\x00" not in data and b"\x07" not in data and b"Bell NUL here." in data
    document = docx.Document(io.BytesIO(rendering.render("docx")))
    assert any("Bell NUL here." in p.text for p in document.paragraphs)


def test_one_format_that_fails_does_not_stop_the_others(tmp_path, monkeypatch):
    from deep_research.export import word
    from deep_research.export.formats import Rendering, write_reports

    from report_sample import sample_facts, sample_output

    def refuses(document):
        raise ValueError("All strings must be XML compatible")

    monkeypatch.setattr(word, "render_docx", refuses)
    paths = [tmp_path / "r.docx", tmp_path / "r.html", tmp_path / "r.md"]
    problems = write_reports(Rendering(sample_output(), sample_facts()), paths)
    assert problems == [f"{paths[0]}: could not render docx: All strings must be XML compatible"]
    assert not paths[0].exists() and paths[1].exists() and paths[2].exists()
