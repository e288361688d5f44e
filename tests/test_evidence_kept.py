"""Evidence kept as it was read (issue 40): what a finished run's citations rest on is stored
with it, once per text, within its byte limit, out of graph state, deleted with it; exports and
`deep-research evidence` show it. The real CLI against the changing world's stand-ins."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3

import pytest
from keeping_world import QUESTION, RUN_FLAGS, world_on

from deep_research.cli.main import main
from deep_research.domain.evidence_text import CUT_LINE, around, content_hash, cut_to, size_of
from deep_research.tools.evidence.store import EvidenceStore

from stand_ins.changing_world import TAIL, filler, zeta


def run(db: str, thread: str, *flags: str) -> None:
    assert (
        main(["run", QUESTION, *RUN_FLAGS, "--checkpoint-db", db, "--thread-id", thread, *flags])
        == 0
    )


async def kept_rows(db: str, thread: str):
    async with EvidenceStore(db) as store:
        rows = await store.kept(thread)
        texts = {row.number: await store.text(row.stored_sha256) for row in rows}
        return rows, texts, await store.sizes()


def checkpoint_bytes(db: str) -> bytes:
    """Every byte LangGraph's SQLite saver keeps (checkpoints and their writes)."""
    with sqlite3.connect(db) as connection:
        blobs = connection.execute("SELECT checkpoint, metadata FROM checkpoints").fetchall()
        blobs += connection.execute("SELECT value, value FROM writes").fetchall()
    return b"".join(bytes(part or b"") for row in blobs for part in row)


# ---------------------------------------------------------------- the text, cut and found


def test_a_text_that_fits_is_kept_whole_and_a_cut_one_keeps_its_quoted_paragraphs():
    paragraphs = [f"Paragraph {n} says nothing much at all, in many words." * 4 for n in range(20)]
    paragraphs[13] = "The Zeta index of Quillon alloy is 7301."
    text = "\n\n".join(paragraphs)
    assert cut_to(text, [], size_of(text)) == text
    cut = cut_to(text, ["the zeta index of quillon alloy is 7301"], 900)
    assert size_of(cut) <= 900
    assert "The Zeta index of Quillon alloy is 7301." in cut  # the quote's paragraph first
    assert "not kept here" in cut and cut.count("[…") >= 1  # every cut is said
    assert cut_to(text, [], 100) == ""  # too little room for a line that says so


def test_a_quote_is_found_in_its_text_whatever_the_spacing_and_marks():
    text = "Before.\n\nThe “Zeta”   index\nis 7301.\n\nAfter."
    before, words, after = around(text, 'the "zeta" index is 7301', 10)
    assert words.startswith("The “Zeta”") and before.endswith("\n\n") and after.startswith(".")
    assert around(text, "is 7302", 10) is None
    assert content_hash(text) == hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------- a run keeps what it read


def test_a_finished_run_keeps_each_cited_page_as_read_and_none_of_it_in_its_checkpoints(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=2, filler=60):
        run(db, "first", "--output", str(tmp_path / "r.md"))
        rows, texts, _ = asyncio.run(kept_rows(db, "first"))
        assert [row.number for row in rows] == [1, 2]
        for row in rows:
            assert row.read.kind == "page" and row.read.status == 200
            assert row.read.etag.startswith('"') and row.read.last_modified.endswith("GMT")
            assert row.read.fetched.endswith("Z") and not row.cut
            assert content_hash(texts[row.number]) == row.sha256 == row.stored_sha256
            assert TAIL in texts[row.number]  # the whole page, past what any evidence holds
        assert zeta(0) in texts[1] and zeta(0) in (tmp_path / "r.md").read_text()
    saved = checkpoint_bytes(db)  # graph state holds a page's best passages, never the page
    assert sum(part.encode() in saved for part in filler(60)) < 30
    assert all(part in texts[1] for part in filler(60))


def test_two_runs_citing_the_same_pages_store_each_text_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=2):
        run(db, "first")
        run(db, "second")
        _, _, sizes = asyncio.run(kept_rows(db, "second"))
    assert sizes["texts"] == 2  # two pages, kept by two runs
    assert (
        sizes["threads"]["first"]["bytes"] == sizes["threads"]["second"]["bytes"] == sizes["bytes"]
    )


def test_a_run_keeps_no_more_than_its_evidence_limit_and_says_where_it_cut(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=2, filler=40):
        run(db, "first", "--set", "evidence_max_bytes=2500")
        rows, texts, _ = asyncio.run(kept_rows(db, "first"))
    assert sum(row.stored_bytes for row in rows) <= 2500
    assert all(row.cut and row.stored_bytes < row.read_bytes for row in rows)
    assert CUT_LINE.split("{")[0] in texts[1] and zeta(0) in texts[1]  # the quotes stay


def test_the_evidence_command_prints_the_text_around_a_citations_quote_as_plain_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=1) as world:
        world.pages.edit(0, "Cookie settings.", "Cookie \x1b[31msettings\x1b]0;owned\x07.")
        run(db, "first")
        capsys.readouterr()
        assert main(["evidence", "first", "--checkpoint-db", db]) == 0
        listing = capsys.readouterr().out
        assert "[1]" in listing and "page" in listing and world.pages.page_url(0) in listing
        assert main(["evidence", "first", "1", "--checkpoint-db", db, "--context", "80"]) == 0
        shown = capsys.readouterr().out
    assert f">>>{zeta(0)}<<<" in shown
    assert "sha256:" in shown and "validators: ETag" in shown
    assert "\x1b" not in shown and "\x07" not in shown  # a page cannot drive the terminal
    assert main(["evidence", "first", "7", "--checkpoint-db", db]) == 2
    assert "cites sources 1 to 1, not 7" in capsys.readouterr().err
    assert main(["evidence", "nothing", "--checkpoint-db", db]) == 2


def test_exports_show_each_citations_quote_read_time_and_hash(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=1):
        run(db, "first")
    html, docx = tmp_path / "r.html", tmp_path / "r.docx"
    assert (
        main(
            ["export", "first", "--checkpoint-db", db, "--output", str(html), "--output", str(docx)]
        )
        == 0
    )
    rows, _, _ = asyncio.run(kept_rows(db, "first"))
    page = html.read_text()
    assert rows[0].sha256 in page and rows[0].read.fetched[:10] in page
    assert f'<q dir="auto">{zeta(0)}</q>' in page
    from docx import Document

    cells = [c.text for t in Document(str(docx)).tables for r in t.rows for c in r.cells]
    assert any(rows[0].sha256 in cell and zeta(0) in cell for cell in cells)


def test_deleting_a_run_deletes_its_evidence_but_not_what_another_run_shares(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    from deep_research.service.admission import Operator
    from deep_research.service.caller import Caller
    from deep_research.service.runs import open_service

    db = str(tmp_path / "runs.sqlite")
    with world_on(monkeypatch, topics=2):
        run(db, "first")
        run(db, "second")

    async def delete(thread: str) -> None:
        async with open_service(db, Operator()) as service:
            await service.delete(Caller("cli"), thread)

    asyncio.run(delete("first"))
    rows, _, sizes = asyncio.run(kept_rows(db, "first"))
    assert rows == [] and sizes["texts"] == 2  # the second run still keeps both pages
    asyncio.run(delete("second"))
    _, _, sizes = asyncio.run(kept_rows(db, "second"))
    assert sizes == {"texts": 0, "bytes": 0, "threads": {}}


def test_local_documents_are_kept_with_their_files_validators_and_rechecked_from_the_files(
    chat_server, tmp_path, capsys
):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "zstd.md").write_text("# zstd\n\nzstd compresses logs well at level 19.\n")
    (folder / "xz.md").write_text("# xz\n\nxz compresses logs slowly but very small.\n")
    db = str(tmp_path / "runs.sqlite")
    question = ["run", "How well do compressors compress logs?", "--search", "local"]
    flags = ["--corpus", str(folder), "--checkpoint-db", db, "--thread-id", "local", "--quiet"]
    assert main([*question, *flags, "--max-iterations", "1", "--min-iterations", "1"]) == 0
    rows, texts, _ = asyncio.run(kept_rows(db, "local"))
    assert rows and {row.read.kind for row in rows} == {"document"}
    assert all(row.read.etag.count("-") == 1 and texts[row.number] for row in rows)
    capsys.readouterr()
    assert main(["recheck", "local", "--corpus", str(folder), "--checkpoint-db", db]) == 0
    assert "page gone" not in capsys.readouterr().out
    gone = next(row for row in rows if "zstd.md" in row.read.url)
    (folder / "zstd.md").unlink()
    out = tmp_path / "recheck.json"
    again = ["recheck", "local", "--corpus", str(folder), "--checkpoint-db", db]
    assert main([*again, "--json", str(out)]) == 0
    from deep_research.state import Recheck

    result = Recheck.model_validate_json(out.read_text())
    states = {s.number: s.state for s in result.sources}
    assert states[gone.number] == "gone"
    assert {state for n, state in states.items() if n != gone.number} == {"unchanged"}


def test_a_page_that_shows_a_key_we_hold_is_kept_and_read_again_without_it(
    page_server, monkeypatch: pytest.MonkeyPatch
):
    """Main's redaction where a page's text enters: the evidence holds the page as the run
    does, and a re-check compares the text read now in the same form (no false change)."""
    from deep_research.settings import Settings
    from deep_research.tools.evidence.reads import PageRead
    from deep_research.tools.evidence.reread import reread
    from deep_research.tools.search.pages import PageFetcher

    key = "sk-held-key-for-this-test-81f3"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    page_server.pages["/leaky"] = (
        "<html><body><article><p>The Zeta index of Quillon alloy is 7301.</p>"
        f"<p>Debug: called with Authorization Bearer {key}.</p></article></body></html>"
    )
    url = f"{page_server.url}/leaky"
    settings = Settings(fetch_private_addresses=True)
    kept: list[str] = []

    async def on_read(asked: str, answer, text: str) -> None:
        kept.append(text)

    async def scenario():
        page = await PageFetcher(settings, on_read=on_read).page(url)
        before = PageRead(url=url, kind="page", text=kept[0])
        return page, await reread(before, PageFetcher(settings), 10)

    page, again = asyncio.run(scenario())
    assert kept and key not in kept[0] and "Bearer ***" in kept[0]
    assert page.text is kept[0] and not [p for p in page.passages if key in p]  # what is quoted
    assert again.status == 200 and again.text == kept[0]  # the same text: unchanged by hash


def test_a_stores_errors_are_caught_and_psycopg_is_imported_only_for_postgresql(tmp_path):
    import psycopg

    from deep_research.tools.evidence.store import store_errors

    assert store_errors(None) == (sqlite3.Error, OSError)
    assert store_errors(EvidenceStore(str(tmp_path / "runs.db"))) == (sqlite3.Error, OSError)
    on_postgres = store_errors(EvidenceStore("postgresql://nobody@127.0.0.1:1/none"))
    assert psycopg.Error in on_postgres and sqlite3.Error in on_postgres
