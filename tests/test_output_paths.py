"""A path that cannot be written is found before the run is paid for; one that fails at the end
loses nothing else (issue 28, item 3). Commands run in process against the stand-ins."""

from __future__ import annotations

import pytest

from deep_research.cli.main import main

QUESTION = "Compare zstd and xz"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A working folder with its own checkpoint store, a file `live.md` and a folder `out`."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store" / "c.sqlite"))
    monkeypatch.delenv("DEEP_RESEARCH_CONFIG", raising=False)
    (tmp_path / "live.md").write_text("an earlier report\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    return tmp_path


def run(*args: str) -> int:
    """`deep-research run` for one quick round."""
    return main(["run", QUESTION, "--max-iterations", "1", "--min-iterations", "1", *args])


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--output", "live.md/x.md"], "--output live.md/x.md: live.md is a file, not a folder"),
        (["--output", "out"], "--output out: is a folder; name a file (e.g. out/report.md)"),
        (["--output", "/proc/nope/r.md"], "--output /proc/nope/r.md: cannot write in /proc"),
        (["--json", "live.md/r.json"], "--json live.md/r.json: live.md is a file, not a folder"),
        (["--json", "out"], "--json out: is a folder"),
        (["--output", "ok.md", "--output", "a/b/live.md/c/r.html"], None),
    ],
    ids=["file-as-folder", "folder", "proc", "json-file-as-folder", "json-folder", "deep"],
)
def test_an_output_path_that_cannot_be_written_is_refused_before_any_call(
    flags, said, chat_server, search_server, home, capsys
):
    if said is None:  # a file deep under a folder path that holds a file on its way
        (home / "a" / "b").mkdir(parents=True)
        (home / "a" / "b" / "live.md").write_text("x", encoding="utf-8")
        said = "--output a/b/live.md/c/r.html: a/b/live.md is a file, not a folder"
    assert run(*flags) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith(f"error: {said}"), line
    assert chat_server.requests == [] and search_server.searches == []
    assert (home / "live.md").read_text(encoding="utf-8") == "an earlier report\n"


def test_a_writable_path_in_a_folder_yet_to_be_made_is_accepted(
    chat_server, search_server, home, capsys
):
    assert run("--output", "new/deeper/r.md", "--json", "new/r.json", "--quiet") == 0
    assert (home / "new" / "deeper" / "r.md").read_text(encoding="utf-8").startswith("# ")
    assert (home / "new" / "r.json").exists()
    assert not list(home.rglob(".deep-research-probe-*"))  # the probe files are gone


@pytest.mark.parametrize(
    ("out_dir", "said"),
    [
        ("live.md/out", "--out-dir live.md/out: live.md is a file, not a folder"),
        ("live.md", "--out-dir live.md: is a file, not a folder"),
        ("/proc/nope", "--out-dir /proc/nope: cannot write in /proc"),
    ],
)
def test_a_batch_out_dir_that_cannot_be_a_folder_is_refused_before_any_call(
    out_dir, said, chat_server, search_server, home, capsys
):
    (home / "questions.txt").write_text(f"{QUESTION}\n", encoding="utf-8")
    assert main(["batch", "questions.txt", "--out-dir", out_dir]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith(f"error: {said}"), line
    assert chat_server.requests == [] and search_server.searches == []


@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "plain"])
def test_a_write_that_fails_at_the_end_keeps_the_others_and_says_how_to_export(
    quiet, chat_server, search_server, home, capsys
):
    """The path was fine at the start; by the end a folder stands there. The other files are
    written, the thread id and the export command are shown (with --quiet too), exit 1."""

    def folder_appears(number: int, body: dict) -> None:
        (home / "late.md").mkdir(exist_ok=True)

    chat_server.fault = folder_appears
    flags = ["--output", "late.md", "--output", "r.html", "--json", "r.json", "--thread-id", "t9"]
    assert run(*flags, *(["--quiet"] if quiet else [])) == 1
    err = capsys.readouterr().err
    assert "error: late.md: cannot write it (Is a directory)" in err
    assert "the run is saved as thread t9; once that is fixed, write it with: " in err
    assert "deep-research export t9 --output FILE" in err and "Traceback" not in err
    assert "<html" in (home / "r.html").read_text(encoding="utf-8")
    assert '"report"' in (home / "r.json").read_text(encoding="utf-8")
    (home / "late.md").rmdir()
    chat_server.requests.clear()
    assert main(["export", "t9", "--output", "late.md"]) == 0
    assert (home / "late.md").read_text(encoding="utf-8").startswith("# ")
    assert chat_server.requests == []
