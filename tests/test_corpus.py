"""Local-documents search: every file type, headings and anchors, refreshes, safety, queries."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

from deep_research.tools.corpus import CorpusError, LocalCorpus, reading
from deep_research.tools.corpus import index as corpus_index
from deep_research.tools.corpus.index import fts_query
from deep_research.tools.corpus.passages import chunk_text, markdown_blocks, passages_of, rst_blocks
from deep_research.tools.corpus.reading import Document, SkippedFile, read_document

from stand_ins.documents import make_pdf

MARKDOWN = """# Guide

Welcome to the aardvark handbook.

## Install

### Linux

Run the installer with apt on Debian to get quokka support.

### Windows

Download the setup file for wombat.

```sh
# not a heading: zeppelin
```
"""

RST = """Manual
======

Intro about pangolins.

Usage
-----

Call the axolotl command.
"""

HTML = """<html><head><title>Field Notes</title><style>.x { color: red }</style></head>
<body><nav>menu narwhalnav</nav><script>var okapiscript = 1;</script>
<h1>Animals</h1><p>Some text.</p>
<h2>Big Cats</h2><p>The ocelot hunts <b>at night</b>.</p>
</body></html>"""


def searchable_files(corpus: LocalCorpus) -> int:
    """How many files the index holds searchable passages for (read from the index itself)."""
    with sqlite3.connect(corpus.index_path) as db:
        return db.execute("SELECT count(*) FROM files WHERE passages > 0").fetchone()[0]


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every entry under a folder with its size and mtime, to prove nothing was written."""
    return {
        str(path.relative_to(folder)): (path.lstat().st_size, path.lstat().st_mtime_ns)
        for path in folder.rglob("*")
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A corpus of one file of every supported type."""
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "guide.md").write_text(MARKDOWN, encoding="utf-8")
    (root / "notes.txt").write_text("Plain notes mention the capybara.\n", encoding="utf-8")
    (root / "manual.rst").write_text(RST, encoding="utf-8")
    (root / "sub" / "page.html").write_text(HTML, encoding="utf-8")
    pdf = make_pdf(["First page about lemurs", "Second page about meerkats"], title="Report")
    (root / "sub" / "report.pdf").write_bytes(pdf)
    return root


@pytest.fixture
def corpus(folder: Path, tmp_path: Path) -> LocalCorpus:
    """The corpus over `folder`, with its index beside (not inside) the folder."""
    return LocalCorpus(folder, tmp_path / "index" / "corpus.sqlite")


def test_pdf_helper_makes_extractable_text() -> None:
    """The hand-made PDF really carries text pypdf can extract, or the PDF tests prove nothing."""
    reader = PdfReader(io.BytesIO(make_pdf(["hello lemur"], title="T")))
    assert "hello lemur" in reader.pages[0].extract_text()
    assert reader.metadata.title == "T"


@pytest.mark.parametrize(
    ("query", "url_end", "title"),
    [
        ("quokka", "guide.md#linux", "Guide — Install > Linux"),
        ("capybara", "notes.txt", "notes.txt"),
        ("axolotl", "manual.rst#usage", "Manual — Usage"),
        ("ocelot", "sub/page.html#big-cats", "Field Notes — Animals > Big Cats"),
        ("meerkats", "sub/report.pdf#page=2", "Report — Page 2"),
    ],
)
def test_every_type_is_searchable_with_heading_and_anchor(
    corpus: LocalCorpus, query: str, url_end: str, title: str
) -> None:
    """Each file type is found, and the hit links to its section or page."""
    hits = corpus.search(query)
    assert hits, query
    best = hits[0]
    assert best.url.startswith("file:///")
    assert best.url.endswith("/" + url_end)
    assert best.title == title
    assert query in best.content
    assert best.score > 0
    assert best.query == query


def test_hits_are_ranked_capped_and_distinct(corpus: LocalCorpus) -> None:
    """Scores are positive and descending, content is capped, URLs do not repeat."""
    hits = corpus.search("the page about a guide", max_results=10)
    assert len(hits) >= 3
    assert all(hit.score > 0 for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert len({hit.url for hit in hits}) == len(hits)
    assert all(len(hit.content) <= 1200 for hit in hits)
    assert len(corpus.search("page", max_results=1)) == 1


def test_html_drops_script_style_nav_and_code_fence_is_not_a_heading(corpus: LocalCorpus) -> None:
    """Navigation and script text is not indexed; `#` inside a code fence stays body text."""
    assert corpus.search("narwhalnav") == []
    assert corpus.search("okapiscript") == []
    [hit] = corpus.search("zeppelin")
    assert hit.url.endswith("#windows")


def test_refresh_is_incremental(
    corpus: LocalCorpus, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only changed files are re-read; deletes and adds are picked up."""
    first = corpus.refresh()
    assert (first.files_added, first.files_updated, first.files_removed) == (5, 0, 0)
    assert searchable_files(corpus) == 5

    read: list[str] = []
    real_read = corpus_index.read_document

    def spy(path: Path) -> Document:
        """Record which files get read."""
        read.append(path.name)
        return real_read(path)

    monkeypatch.setattr(corpus_index, "read_document", spy)
    assert corpus.refresh().files_updated == 0
    assert read == []

    (folder / "notes.txt").write_text("Now the notes talk about a tapir.\n", encoding="utf-8")
    changed = corpus.refresh()
    assert (changed.files_added, changed.files_updated, changed.files_removed) == (0, 1, 0)
    assert read == ["notes.txt"]
    assert corpus.search("capybara") == []
    assert corpus.search("tapir")[0].url.endswith("notes.txt")

    (folder / "manual.rst").unlink()
    removed = corpus.refresh()
    assert (removed.files_added, removed.files_updated, removed.files_removed) == (0, 0, 1)
    assert corpus.search("axolotl") == []

    (folder / "sub" / "new.md").write_text("# New\n\nA fresh note on the dugong.\n", "utf-8")
    added = corpus.refresh()
    assert (added.files_added, added.files_updated, added.files_removed) == (1, 0, 0)
    assert corpus.search("dugong")[0].url.endswith("sub/new.md#new")
    assert searchable_files(corpus) == 5
    assert read == ["notes.txt", "new.md"]


def test_incremental_index_ranks_like_a_fresh_one(
    corpus: LocalCorpus, folder: Path, tmp_path: Path
) -> None:
    """Deletes from the contentless full-text table are exact: scores match a rebuild."""
    corpus.refresh()
    (folder / "guide.md").write_text(MARKDOWN.replace("quokka", "quokka quokka"), "utf-8")
    (folder / "notes.txt").unlink()
    corpus.refresh()
    fresh = LocalCorpus(folder, tmp_path / "fresh.sqlite")
    for query in ("quokka", "page", "guide install", "lemurs"):
        assert [(h.url, round(h.score, 9)) for h in corpus.search(query, 10)] == [
            (h.url, round(h.score, 9)) for h in fresh.search(query, 10)
        ]


def test_symlinks_out_of_the_folder_are_not_followed(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file or directory symlink pointing outside is skipped with a warning."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nThe password is walrus.\n", "utf-8")
    (folder / "leak.md").symlink_to(outside / "secret.md")
    (folder / "leakdir").symlink_to(outside, target_is_directory=True)
    (folder / "inner.md").symlink_to(folder / "guide.md")
    corpus = LocalCorpus(folder, tmp_path / "index.sqlite")
    with caplog.at_level(logging.WARNING):
        stats = corpus.refresh()
    assert corpus.search("walrus") == []
    assert searchable_files(corpus) == 5
    assert stats.files_skipped == 1
    assert "leak.md" in caplog.text
    assert "leakdir" in caplog.text
    assert len(corpus.search("quokka", 10)) == 1


def test_unreadable_files_are_skipped_with_a_warning(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Binary, encrypted and broken files are skipped by name; the rest is indexed."""
    (folder / "blob.txt").write_bytes(b"text\x00\x01\x02binary")
    (folder / "locked.pdf").write_bytes(make_pdf(["hidden hyena"], password="secret"))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    corpus = LocalCorpus(folder, tmp_path / "index.sqlite")
    with caplog.at_level(logging.WARNING):
        stats = corpus.refresh()
    assert stats.files_skipped == 3
    assert searchable_files(corpus) == 5
    for name in ("blob.txt", "locked.pdf", "broken.pdf"):
        assert name in caplog.text
    assert "NUL" in caplog.text
    assert "password" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = corpus.refresh()
    assert again.files_skipped == 3
    assert caplog.text == ""


def test_pypdf_is_imported_only_when_a_pdf_is_read(tmp_path: Path) -> None:
    """A process that builds the graph and never reads a PDF does without pypdf's 17 MiB; the
    first PDF read imports it, and a broken PDF is still skipped by name."""
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (tmp_path / "a.pdf").write_bytes(make_pdf(["lemurs sleep 16 hours"], title="T"))
    probe = (
        "import sys\n"
        "from deep_research.graph import build_graph\n"
        "from pathlib import Path\n"
        "from deep_research.tools.corpus.reading import SkippedFile, read_document\n"
        "build_graph()\n"
        "print('before', 'pypdf' in sys.modules)\n"
        f"print(read_document(Path({str(tmp_path / 'a.pdf')!r})).blocks[0].text)\n"
        "try:\n"
        f"    read_document(Path({str(tmp_path / 'broken.pdf')!r}))\n"
        "except SkippedFile as skipped:\n"
        "    print('skipped:', skipped)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.splitlines()[:2] == ["before False", "lemurs sleep 16 hours"], done
    assert "skipped: is not a readable PDF" in done.stdout, done


def test_permission_denied_is_skipped(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A file the OS refuses to open is skipped with a warning, not fatal (even as root)."""
    (folder / "private.md").write_text("# Private\n\nNobody reads this.\n", "utf-8")
    real_open = os.open

    def refuse(path: str | Path, flags: int, *args: int) -> int:
        """os.open that denies the private file, as a chmod 000 would for a normal user."""
        if Path(path).name == "private.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(reading.os, "open", refuse)
    with caplog.at_level(logging.WARNING):
        stats = LocalCorpus(folder, tmp_path / "index.sqlite").refresh()
    assert stats.files_skipped == 1
    assert "private.md" in caplog.text
    assert "Permission denied" in caplog.text


def test_reading_never_follows_a_symlink(tmp_path: Path) -> None:
    """Even a link swapped in after the folder walk is not read (O_NOFOLLOW)."""
    target = tmp_path / "target.md"
    target.write_text("# Target\n", "utf-8")
    (tmp_path / "link.md").symlink_to(target)
    with pytest.raises(SkippedFile, match="cannot be read"):
        read_document(tmp_path / "link.md")


def test_text_falls_back_from_utf8(tmp_path: Path) -> None:
    """A cp1252 file is still read."""
    path = tmp_path / "legacy.txt"
    path.write_bytes("Un café à Zürich.".encode("cp1252"))
    assert read_document(path).text == "Un café à Zürich."


def test_folder_errors_are_clear(tmp_path: Path) -> None:
    """A missing folder, a file, an empty folder and an index inside the folder are refused."""
    with pytest.raises(CorpusError, match="does not exist"):
        LocalCorpus(tmp_path / "missing", tmp_path / "index.sqlite")
    (tmp_path / "file.md").write_text("# Hi\n", "utf-8")
    with pytest.raises(CorpusError, match="is not a directory"):
        LocalCorpus(tmp_path / "file.md", tmp_path / "index.sqlite")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "image.png").write_bytes(b"\x89PNG")
    corpus = LocalCorpus(empty, tmp_path / "index.sqlite")
    with pytest.raises(CorpusError, match="holds no readable documents"):
        corpus.refresh()
    with pytest.raises(CorpusError, match="holds no readable documents"):
        corpus.search("anything")
    with pytest.raises(CorpusError, match="outside the corpus folder"):
        LocalCorpus(empty, empty / "index.sqlite")
    assert issubclass(CorpusError, ValueError)


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        "install-linux: apt",
        "quokka AND wombat",
        "OR",
        "NEAR(quokka wombat)",
        "(parenthesised) query)",
        "col:umn ^start * -minus +plus",
        "中文 查询",
        "",
        "  !!! ",
    ],
)
def test_any_query_text_is_safe(corpus: LocalCorpus, query: str) -> None:
    """FTS5 syntax in user text never raises; words still match."""
    hits = corpus.search(query)
    assert isinstance(hits, list)
    if "quokka" in query:
        assert hits


def test_query_terms_are_quoted_and_ored() -> None:
    """Each word is one quoted term; CJK runs become bigrams; one CJK char is a prefix."""
    assert fts_query('say "hi" AND bye') == '"say" OR "hi" OR "AND" OR "bye"'
    assert fts_query("数据索引") == '"数据" OR "据索" OR "索引"'
    assert fts_query("数") == '"数" *'
    assert fts_query("()") == ""


def test_chinese_documents_are_found_by_chinese_queries(tmp_path: Path) -> None:
    """Unspaced Chinese text matches two-character words, phrases and single characters."""
    folder = tmp_path / "zh"
    folder.mkdir()
    (folder / "检索.md").write_text(
        "# 全文检索\n\n本系统支持中文文档的全文检索，数据索引保存在本地。\n", "utf-8"
    )
    (folder / "other.md").write_text("# Other\n\nNothing Chinese here.\n", "utf-8")
    corpus = LocalCorpus(folder, tmp_path / "index.sqlite")
    for query in ("索引", "中文文档", "数据索引保存", "检索 system", "档"):
        hits = corpus.search(query)
        assert hits, query
        assert "%E6%A3%80%E7%B4%A2.md#" in hits[0].url
    assert corpus.search("索引")[0].title == "全文检索"


def test_index_lives_outside_and_folder_is_untouched(corpus: LocalCorpus, folder: Path) -> None:
    """Indexing writes only the index file, which is not inside the corpus folder."""
    before = snapshot(folder)
    corpus.refresh()
    corpus.search("quokka")
    assert corpus.index_path.exists()
    assert not corpus.index_path.is_relative_to(folder.resolve())
    assert snapshot(folder) == before


def test_concurrent_async_searches(corpus: LocalCorpus) -> None:
    """Searches from many asyncio tasks (each in a thread) agree with a direct search."""
    expected = corpus.search("quokka wombat")

    async def many() -> list[list]:
        """Twenty searches at once, plus a refresh in between."""
        tasks = [corpus.asearch("quokka wombat") for _ in range(20)]
        return await asyncio.gather(*tasks, asyncio.to_thread(corpus.refresh))

    *results, stats = asyncio.run(many())
    assert all(result == expected for result in results)
    assert stats.files_updated == 0


def test_passages_keep_heading_paths_and_size() -> None:
    """Heading paths nest, repeated headings get numbered anchors, chunks stay within 1,200."""
    text = "# A\n\n## B\n\nx\n\n## B\n\ny\n\n### C\n\nz\n"
    passages = passages_of(markdown_blocks(text))
    assert [(p.heading, p.anchor, p.text) for p in passages] == [
        ("A > B", "b", "x"),
        ("A > B", "b-1", "y"),
        ("A > B > C", "c", "z"),
    ]
    rst = passages_of(rst_blocks("=====\nTop\n=====\n\nBody.\n\nSub\n---\n\nMore.\n"))
    assert [(p.heading, p.anchor) for p in rst] == [("Top", "top"), ("Top > Sub", "sub")]
    long = "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(40))
    chunks = chunk_text(long)
    assert all(len(chunk) <= 1200 for chunk in chunks)
    assert all(len(chunk) >= 800 for chunk in chunks[:-1])
    assert "".join(chunks).replace("\n", "").replace(" ", "") == long.replace("\n", "").replace(
        " ", ""
    )
    assert all(len(chunk) <= 1200 for chunk in chunk_text("字" * 5000))


def test_a_parsed_html_page_leaves_the_garbage_collector_nothing_of_its_own(monkeypatch):
    """lxml's parser and its context hold each other in a cycle: what the page's reader
    gathered (its links' tracker: a text part and a pending link per anchor) waited for the
    collector with them. Now it is freed as the parse returns, with no collection."""
    import gc
    import weakref

    trackers = []

    class Tracked(reading.LinkTracker):
        def __init__(self, limit: int) -> None:
            super().__init__(limit)
            trackers.append(weakref.ref(self))

    monkeypatch.setattr(reading, "LinkTracker", Tracked)
    anchors = "".join(f'<li><a href="/p/{n}">Page {n}</a></li>' for n in range(150))
    page = f"<html><body><p>{'word ' * 200}</p><ul>{anchors}</ul></body></html>".encode()
    gc.disable()
    try:
        document = reading.read_html(page)
        (tracker,) = trackers
        freed = tracker() is None  # before any collection could run
    finally:
        gc.enable()
    assert len(document.links) == 150 and "word word" in document.blocks[0].text
    assert freed
