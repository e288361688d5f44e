"""Research over a folder of documents through the CLI: no web search, no search key needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.cli.main import main

from stand_ins.documents import make_pdf


@pytest.fixture
def docs(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # indexes go here
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "data" / "c.sqlite"))
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "docs"
    (folder / "notes").mkdir(parents=True)
    (folder / "zstd.md").write_text(
        "# Zstandard\n\n## Compression ratio\n\nzstd level 19 compresses logs about 10x.\n"
    )
    (folder / "notes" / "xz.txt").write_text("xz uses LZMA2 and compresses logs about 12x.\n")
    (folder / "brotli.html").write_text(
        "<html><head><title>Brotli</title></head><body><h1>Brotli</h1>"
        "<p>Brotli compresses web logs well.</p><script>var x</script></body></html>"
    )
    (folder / "lz4.pdf").write_bytes(make_pdf(["lz4 compresses logs fast but only 3x."], "LZ4"))
    (folder / "blob.bin.txt").write_bytes(b"\x00\x01binary")
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\ncompresses logs secret.\n")
    (folder / "link.md").symlink_to(outside)
    return folder


def test_local_research_end_to_end(chat_server, search_server, docs, tmp_path, capsys):
    code = main(
        [
            "run",
            "How well do compressors compress logs?",
            "--search",
            "local",
            "--corpus",
            str(docs),
            "--output",
            "report.md",
            "--json",
            "run.json",
            "--max-iterations",
            "1",
            "--min-iterations",
            "1",
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "corpus: " in err and "plan: " in err
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["sources"], record["report"]
    root = docs.resolve().as_uri()
    for source in record["sources"]:
        assert source["url"].startswith(root + "/")  # inside the folder, never the outside link
    urls = " ".join(s["url"] for s in record["sources"])
    assert "secret" not in urls
    kinds = {Path(u.split("#")[0]).suffix for u in urls.split()}
    assert len(kinds & {".md", ".txt", ".html", ".pdf"}) >= 3  # the cited ones, of every kind
    assert search_server.requests == []  # no web search
    assert "## Sources" in (tmp_path / "report.md").read_text()
    assert not any(p.name.endswith(".sqlite") for p in docs.rglob("*"))  # nothing written there


def test_hybrid_uses_both(chat_server, search_server, docs, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    code = main(
        [
            "run",
            "How well do compressors compress logs?",
            "--search",
            "hybrid",
            "--corpus",
            str(docs),
            "--json",
            "run.json",
            "--quiet",
            "--max-iterations",
            "1",
            "--min-iterations",
            "1",
        ]
    )
    assert code == 0
    urls = [s["url"] for s in json.loads((tmp_path / "run.json").read_text())["sources"]]
    assert any(u.startswith("file://") for u in urls)
    assert any(u.startswith("https://example.com/") for u in urls)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "missing", "does not exist"),
        (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "no readable documents"),
    ],
)
def test_a_bad_corpus_exits_2_before_any_call(
    chat_server, search_server, docs, tmp_path, capsys, make, message
):
    folder = make(tmp_path)
    assert main(["run", "q", "--search", "local", "--corpus", str(folder)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert chat_server.requests == []


def test_local_search_needs_a_folder(chat_server, docs, capsys):
    assert main(["run", "q", "--search", "local"]) == 2
    assert "--search 'local' needs --corpus" in capsys.readouterr().err
