"""A report is written whole, and never through a link planted beside it (issue 27, item 10)."""

from __future__ import annotations

import os

import pytest

from deep_research.export.formats import write_file


def test_writes_the_file_whole_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out" / "report.md"
    write_file(target, b"first")
    write_file(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.md"]


def test_a_link_planted_at_the_old_temporary_name_is_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "report.md"
    os.symlink(victim, tmp_path / "report.md.partial")
    write_file(target, b"the report")
    assert victim.read_text() == "precious"
    assert target.read_bytes() == b"the report" and not target.is_symlink()


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_bytes(b"old")

    def full_disk(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_file(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
