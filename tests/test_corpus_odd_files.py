"""Odd files in the corpus folder (issue 20, item 9): one bad name skips one file, a FIFO never
blocks the read."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest

from deep_research.tools.corpus import LocalCorpus
from deep_research.tools.corpus.reading import SkippedFile, read_bytes


def test_a_non_utf8_file_name_skips_that_file_only(tmp_path, caplog):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Zstd\n\nZstd compresses logs well.\n", encoding="utf-8")
    try:
        with open(os.path.join(os.fsencode(folder), b"caf\xe9.md"), "wb") as handle:
            handle.write(b"# Cafe\n\nAn odd name.\n")
    except OSError:
        pytest.skip("this file system refuses non-UTF-8 names")
    corpus = LocalCorpus(folder, tmp_path / "index.sqlite")
    with caplog.at_level(logging.WARNING):
        stats = corpus.refresh()
    assert stats.files_added == 1 and stats.files_skipped == 1
    assert "not valid UTF-8" in caplog.text and "caf" in caplog.text
    assert [hit.title for hit in corpus.search("zstd logs")] == ["Zstd"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "swapped.md"
    os.mkfifo(fifo)
    outcome: list[BaseException | bytes] = []

    def read() -> None:
        try:
            outcome.append(read_bytes(Path(fifo)))
        except SkippedFile as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=5)
    assert not reader.is_alive(), "the read blocked on a FIFO with no writer"
    assert isinstance(outcome[0], SkippedFile) and "regular file" in str(outcome[0])
