"""Reports people can hand on: each format written, then read back with a real tool.

HTML with the standard library's parser (through BeautifulSoup), Word with python-docx, PDF's
text and links with pypdf. `export` renders a finished run from the store with no model or
search call (counted at the stand-ins).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import docx
import pypdf
import pytest
from bs4 import BeautifulSoup

from deep_research.cli.main import main
from deep_research.export.document import build_document
from deep_research.export.formats import Rendering
from deep_research.export.html_page import render_html
from deep_research.export.pdf import PdfRendererMissing, check_pdf_renderer
from deep_research.export.word import render_docx

from report_sample import HOSTILE_TITLE, QUESTION, sample_facts, sample_output


def needs_pdf() -> None:
    """Skip unless WeasyPrint and the Pango it loads are installed (CI's Debian has them)."""
    try:
        check_pdf_renderer()
    except PdfRendererMissing as error:
        pytest.skip(str(error))


def needs_cjk_font() -> None:
    """Skip unless fontconfig finds a font for Chinese: Pango draws CJK text with one, and
    without it the PDF holds boxes (`apt-get install fonts-noto-cjk`; `.ci/browser.sh` does)."""
    if shutil.which("fc-list") is None:
        pytest.skip("fc-list (fontconfig) is not installed, so no CJK font can be found")
    found = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=60
    )
    if not found.stdout.strip():
        pytest.skip("no CJK font is installed (apt-get install fonts-noto-cjk)")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store.sqlite"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sample_html() -> BeautifulSoup:
    page = render_html(build_document(sample_output(), sample_facts()))
    return BeautifulSoup(page, "html.parser")


def test_every_citation_links_to_its_evidence_inside_its_source_and_back():
    soup = sample_html()
    cites = soup.select("sup.cite a[href]")
    assert len(cites) == 10
    for link in cites:
        target = soup.find(id=link["href"][1:])
        source = target.find_parent("li", class_="source")
        assert source["id"] == f"src-{link.get_text()}"  # lands on the source it names
        back = target.find("a", class_="back")
        assert back["href"] == f"#{link['id']}"  # and leads back to the citation
    partial = soup.select_one("#cite-2")
    assert "partial" in partial["class"]
    tip = soup.select_one("#tip-2")
    assert "partly supported" in tip.get_text() and "xz wins on ratio" in tip.get_text()


def test_hostile_text_stays_text_and_only_http_links_are_links():
    page = render_html(build_document(sample_output(), sample_facts()))
    soup = BeautifulSoup(page, "html.parser")
    assert soup.find("script") is None and soup.find("img") is None
    assert soup.select_one("#src-3 .title").get_text() == HOSTILE_TITLE
    assert "<script>" not in page  # escaped, not merely unparsed
    hrefs = [a["href"] for a in soup.find_all("a")]
    assert all(h.startswith(("#", "https://", "http://")) for h in hrefs)
    assert not any("javascript" in h for h in hrefs)
    assert soup.select_one("#src-4 span.url").get_text() == "javascript:alert(2)"  # shown only
    csp = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert not soup.find_all(["link", "iframe"]) and "http" not in soup.style.get_text()


def test_control_characters_from_a_source_do_not_break_any_format():
    output = sample_output()
    output["sources"][0] = output["sources"][0].model_copy(update={"title": "bad\x00\x1btitle"})
    rendering = Rendering(output, sample_facts())
    assert b"badtitle" in rendering.render("html")
    document = docx.Document(io.BytesIO(rendering.render("docx")))
    assert any("badtitle" in p.text for p in document.paragraphs)


def test_a_report_citing_nothing_has_no_empty_sources_section():
    """The honest note of a failed writer cites nothing: no Sources heading stands empty."""
    output = {**sample_output(), "report": f"# {QUESTION}\n\nNo report.\n", "sources": []}
    output["citations"] = []
    rendering = Rendering(output, sample_facts())
    page = BeautifulSoup(rendering.render("html"), "html.parser")
    assert page.find(id="sources") is None and not page.select('a[href="#sources"]')
    document = docx.Document(io.BytesIO(rendering.render("docx")))
    assert "Sources" not in [p.text for p in document.paragraphs]


def test_marks_headings_facts_language_and_direction():
    soup = sample_html()
    assert "unsupported" in soup.select_one("p.flagged")["class"]
    assert soup.select_one("p.flagged.unchecked mark.flag")
    toc = [a["href"] for a in soup.select("nav.toc a")]
    assert toc == ["#sec-2", "#sec-3", "#sec-4", "#sources"]
    assert all(soup.find(id=h[1:]) for h in toc)
    facts = dict(
        zip(
            [d.get_text() for d in soup.select("dt")],
            [d.get_text() for d in soup.select("dd")],
            strict=True,
        )
    )
    assert facts["model"] == "qwen-plus" and facts["quality"] == "82/100"
    assert facts["stop reason"] == "the report was good enough" and facts["cost"] == "$0.0123"
    assert soup.h1.get_text() == QUESTION and soup.html["lang"] == "en"
    arabic = next(p for p in soup.find_all("p") if "ضغط" in p.get_text())
    assert arabic["dir"] == "auto"
    chinese = next(p for p in soup.find_all("p") if "压缩日志" in p.get_text())
    assert chinese["lang"] == "zh-Hans"  # Han glyphs chosen for Chinese in an English page
    output = sample_output()
    output["report"] = "# سؤال\n\nضغط السجلات أسرع باستخدام الأداة [1].\n"
    rtl = build_document(output, sample_facts())
    assert rtl.direction == "rtl"


def test_word_has_headings_lists_tables_superscript_citations_and_evidence():
    data = render_docx(build_document(sample_output(), sample_facts()))
    document = docx.Document(io.BytesIO(data))
    styles = [p.style.name for p in document.paragraphs]
    assert "Title" in styles and "Heading 2" in styles and "List Bullet" in styles
    links = [item for p in document.paragraphs for item in p.iter_inner_content()]
    runs = [r for item in links for r in getattr(item, "runs", [item])]
    superscripts = [r.text for r in runs if r.font.superscript]
    assert superscripts[:4] == ["1", "2", ",", "3"]
    report_table, evidence = document.tables
    assert [c.text for c in report_table.rows[0].cells] == ["tool", "strength", "source"]
    assert len(evidence.rows) == 1 + 10
    assert any("decompression speed is several times" in c.text for c in evidence.columns[3].cells)
    sources = [p.text for p in document.paragraphs if p.text.startswith("3. ")]
    assert sources == [f"3. {HOSTILE_TITLE} — https://example.net/xz"]
    xml = zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml").decode()
    assert 'w:anchor="src_3"' in xml and 'w:name="src_3"' in xml  # citation -> source
    assert xml.count("<w:bidi/>") == 1  # the Arabic paragraph reads right to left
    rels = zipfile.ZipFile(io.BytesIO(data)).read("word/_rels/document.xml.rels").decode()
    assert 'Target="https://example.net/xz" TargetMode="External"' in rels
    assert "javascript" not in rels


def test_pdf_text_and_links():
    needs_pdf()
    needs_cjk_font()
    data = Rendering(sample_output(), sample_facts()).render("pdf")
    reader = pypdf.PdfReader(io.BytesIO(data))
    text = "".join(page.extract_text() for page in reader.pages)
    assert QUESTION in text and "not supported by the sources found" in text
    assert "decompression speed is several times that of xz" in text
    assert "压缩日志时" in text  # CJK text came through (a font covered it)
    annotations = [a.get_object() for page in reader.pages for a in page.get("/Annots", [])]
    destinations = {str(a.get("/Dest")) for a in annotations if a.get("/Dest")}
    uris = {a["/A"]["/URI"] for a in annotations if "/A" in a}
    assert {f"ev-{n}" for n in range(1, 11)} <= destinations  # every citation is clickable
    assert "https://example.net/xz" in uris and not any("javascript" in u for u in uris)


LATIN_FONTS = Path("/usr/share/fonts/truetype/dejavu")  # Debian's fonts-dejavu-core
NO_CJK_FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig><dir>{fonts}</dir><cachedir>{cache}</cachedir></fontconfig>
"""


def test_the_pdf_test_skips_with_its_reason_where_no_cjk_font_is_installed(tmp_path, monkeypatch):
    """A machine with Pango but only Latin fonts (fontconfig told to see DejaVu alone, as on a
    fresh machine without fonts-noto-cjk, where the test failed on `\x00H\x00o\x00w`): the PDF
    test skips, saying which package. The test is called here: the fonts are looked up by
    `fc-list`, a process of its own that reads `FONTCONFIG_FILE`, before any PDF is drawn."""
    needs_pdf()
    fonts = LATIN_FONTS if LATIN_FONTS.is_dir() else tmp_path  # no fonts at all: no CJK either
    config = tmp_path / "fonts.conf"
    config.write_text(NO_CJK_FONTS.format(fonts=fonts, cache=tmp_path / "cache"))
    monkeypatch.setenv("FONTCONFIG_FILE", str(config))
    with pytest.raises(pytest.skip.Exception) as skipped:
        test_pdf_text_and_links()
    assert str(skipped.value) == "no CJK font is installed (apt-get install fonts-noto-cjk)"


def run(*args):
    return main(["run", *args, "--max-iterations", "1", "--min-iterations", "1", "--quiet"])


def test_one_run_writes_every_format_and_export_needs_no_model(
    chat_server, search_server, store, capsys
):
    needs_pdf()
    outputs = ["--output", "r.md", "--output", "r.html", "--output", "r.docx", "--output", "r.pdf"]
    assert run("Compare zstd and xz", "--thread-id", "t1", *outputs) == 0
    assert (store / "r.md").read_text().startswith("# Compare zstd and xz")
    page = BeautifulSoup((store / "r.html").read_text(), "html.parser")
    # nine sources, each cited in its own section (and in the others it bears on), one of them
    # again by the summary
    assert len(page.select("sup.cite a")) >= 10 and len(page.select("li.source")) == 9
    assert docx.Document(str(store / "r.docx")).paragraphs[0].text == "Compare zstd and xz"
    assert "Compare zstd and xz" in pypdf.PdfReader(store / "r.pdf").pages[0].extract_text()
    calls, searches = sum(chat_server.brain.calls.values()), len(search_server.searches)
    capsys.readouterr()
    exported = ["--output", "e.html", "--output", "e.docx", "--format", "md"]
    assert main(["export", "t1", *exported]) == 0
    assert capsys.readouterr().out.startswith("# Compare zstd and xz")
    assert sum(chat_server.brain.calls.values()) == calls  # no model call
    assert len(search_server.searches) == searches  # no search
    again = BeautifulSoup((store / "e.html").read_text(), "html.parser")
    assert again.select("sup.cite a") and again.h1.get_text() == "Compare zstd and xz"


def test_export_of_unknown_thread_or_bad_name_exits_2(chat_server, search_server, store, capsys):
    assert main(["export", "nope", "--output", "x.html"]) == 2
    assert "no checkpoint store at" in capsys.readouterr().err
    assert run("Compare zstd and xz", "--output", "r.txt") == 2
    assert "extension '.txt' names no format" in capsys.readouterr().err
    assert sum(chat_server.brain.calls.values()) == 0  # refused before any call


def test_missing_pdf_renderer_exits_2_naming_the_fix_and_writes_the_rest(
    chat_server, search_server, store, capsys, monkeypatch
):
    assert run("Compare zstd and xz", "--thread-id", "t1", "--output", "r.md") == 0
    monkeypatch.setitem(sys.modules, "weasyprint", None)  # as if the extra was never installed
    capsys.readouterr()
    code = main(["export", "t1", "--output", "e.pdf", "--output", "e.html", "--output", "e.docx"])
    err = capsys.readouterr().err
    assert code == 2 and 'pip install -e ".[pdf]"' in err
    assert "written: e.html, e.docx" in err
    assert (store / "e.html").exists() and (store / "e.docx").exists()
    assert not (store / "e.pdf").exists()
    calls = sum(chat_server.brain.calls.values())
    assert run("Another question", "--output", "n.pdf") == 2  # a run says so before any call
    assert sum(chat_server.brain.calls.values()) == calls


def test_batch_writes_each_format(chat_server, search_server, store):
    (store / "q.txt").write_text("Compare zstd and xz\n")
    flags = ["--max-iterations", "1", "--min-iterations", "1", "--quiet"]
    code = main(["batch", "q.txt", "--out-dir", "out", "--format", "md,html,docx", *flags])
    assert code == 0
    names = sorted(p.name for p in (store / "out").iterdir())
    assert names == [
        "0001-compare-zstd-and-xz.docx",
        "0001-compare-zstd-and-xz.html",
        "0001-compare-zstd-and-xz.md",
        "summary.jsonl",
    ]
    assert main(["batch", "q.txt", "--out-dir", "out", "--format", "md,odt", *flags]) == 2


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_libreoffice_opens_the_word_file(tmp_path):
    (tmp_path / "r.docx").write_bytes(Rendering(sample_output(), sample_facts()).render("docx"))
    profile = f"-env:UserInstallation={(tmp_path / 'lo').as_uri()}"
    subprocess.run(
        ["soffice", "--headless", "--norestore", profile,
         "--convert-to", "pdf", "--outdir", str(tmp_path), str(tmp_path / "r.docx")],
        capture_output=True, timeout=180, check=True,
    )  # fmt: skip
    text = " ".join(
        "".join(p.extract_text() for p in pypdf.PdfReader(tmp_path / "r.pdf").pages).split()
    )
    assert QUESTION in text and "674 MiB of memory" in text


def test_eval_writes_each_format_next_to_the_markdown(
    chat_server, search_server, judge_server, tmp_path, monkeypatch
):
    from test_eval_cli import run_eval

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "eval"
    assert run_eval(judge_server, out, "--limit", "1", "--format", "md,html,docx") == 0
    (task,) = (out / "tasks").iterdir()
    assert {p.name for p in task.glob("report.*")} == {"report.md", "report.html", "report.docx"}
    page = BeautifulSoup((task / "report.html").read_text(), "html.parser")
    assert page.h1.get_text() and page.select("sup.cite a")
    assert run_eval(judge_server, tmp_path / "other", "--format", "rtf") == 2


PANGO_MISSING = """
import cffi.api
real = cffi.api.FFI.dlopen
def dlopen(self, name, *args, **kwargs):  # the system without Pango: the library cannot load
    if "pango" in str(name):
        raise OSError(f"cannot load library {name!r}")
    return real(self, name, *args, **kwargs)
cffi.api.FFI.dlopen = dlopen
from deep_research.export.pdf import PdfRendererMissing, check_pdf_renderer
try:
    check_pdf_renderer()
except PdfRendererMissing as error:
    print(error)
"""


def test_missing_pango_names_the_system_package():
    needs_pdf()
    done = subprocess.run(
        [sys.executable, "-c", PANGO_MISSING], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.startswith("PDF needs the Pango library"), done.stdout + done.stderr
    assert "apt-get install libpango-1.0-0" in done.stdout
    assert "-----" not in done.stdout  # WeasyPrint's own help did not reach stdout
