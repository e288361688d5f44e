"""Exports that would harm the reader's screen or print boxes say so instead."""

from __future__ import annotations

import logging
import os
import stat
import sys

import pytest

from deep_research.cli.main import main
from deep_research.export.pdf import PdfRendererMissing, check_pdf_renderer, render_pdf


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store.sqlite"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def as_terminal(monkeypatch) -> None:
    """Standard output (pytest's capture, once `capsys` is in place) is a terminal."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)


@pytest.mark.parametrize("format", ["pdf", "docx"])
def test_binary_to_a_terminal_is_refused_before_any_call(
    chat_server, search_server, store, capsys, monkeypatch, format
):
    as_terminal(monkeypatch)
    assert main(["run", "Compare zstd and xz", "--format", format]) == 2
    err = capsys.readouterr().err
    assert f"--format {format}: refusing to write binary output to a terminal" in err
    assert f"--output report.{format}" in err
    assert chat_server.chat_requests == [] and search_server.searches == []


def test_export_of_binary_to_a_terminal_is_refused_and_text_is_not(
    chat_server, search_server, store, monkeypatch, capsys
):
    assert main(["run", "Compare zstd and xz", "--max-iterations", "1", "--thread-id", "t"]) == 0
    as_terminal(monkeypatch)
    capsys.readouterr()
    assert main(["export", "t", "--format", "docx"]) == 2
    assert "refusing to write binary output to a terminal" in capsys.readouterr().err
    assert main(["export", "t", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("# Compare zstd and xz")


def fake_fc_list(folder, families: str) -> None:
    """An `fc-list` on PATH that knows `families` (nothing: no font for any language)."""
    script = folder / "fc-list"
    script.write_text(f"#!/bin/sh\nprintf '{families}'\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize(("families", "warned"), [("", True), ("Noto Sans CJK SC\\n", False)])
def test_a_chinese_pdf_without_a_chinese_font_is_said(
    tmp_path, monkeypatch, caplog, families, warned
):
    try:
        check_pdf_renderer()
    except PdfRendererMissing as error:
        pytest.skip(str(error))
    fake_fc_list(tmp_path, families)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with caplog.at_level(logging.WARNING):
        render_pdf("<html lang='zh-Hans'><body><p>压缩日志</p></body></html>")
    said = [r.getMessage() for r in caplog.records if "fonts-noto-cjk" in r.getMessage()]
    assert bool(said) is warned
    if warned:
        assert said[0].startswith("the report has Chinese text but no installed font covers it")
