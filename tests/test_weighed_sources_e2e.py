"""End to end through the CLI and the real ChatOpenAI (issue 36, items 3-4): two sources that
disagree on a figure, one of them stale, and a page about a near-miss entity. The stand-in model
reads only what each prompt shows (`stand_ins/careful_reader.py`): the report must say the
sources disagree, cite both, present the newer figure as current, list each source's date, and
give no fact of the near-miss entity as the asked one's."""

from __future__ import annotations

import re

from deep_research.cli.main import main

from stand_ins.careful_reader import disagreement_sentences, weigh
from stand_ins.chat import Brain, ChatCall

QUESTION = "How fast does zstd 1.5 decompress?"
PAGES = {
    1: ("2021-03-02", "Benchmarks of March 2021: zstd 1.5 decompresses at 1,100 MB/s per core."),
    2: ("2024-05-10", "Release notes, May 2024: zstd 1.5 decompresses at 1,500 MB/s per core."),
    3: ("2024-06-01", "zstd-lite 1.5 decompresses at 900 MB/s per core."),
    4: ("", "A forum thread asks about zstd without giving any figure."),
}
_BLOCK = re.compile(r"^\[(\d+)\] .*? — \S+\n(.*?)(?=\n\n\[\d+\] |\n</data>|\Z)", re.M | re.S)


class CarefulBrain(Brain):
    """Plans one subtask, weighs and writes from what each prompt shows (see module doc)."""

    def on_EvidenceWeighing(self, call: ChatCall) -> dict:
        return weigh(call.user, call.question)

    def on_prose(self, call: ChatCall) -> str:
        section = re.search(r"^Section: (.*)$", call.user, re.M)
        if section is None:
            return super().on_prose(call)
        stated, covered = disagreement_sentences(call.user)
        lines = list(stated)
        for number, text in _BLOCK.findall(call.user.split("\nSources:\n", 1)[-1]):
            for line in text.splitlines():
                if line not in covered and re.search(r"\d", line):
                    lines.append(f"{line} [{number}]")
        return f"## {section.group(1)}\n\n" + "\n".join(dict.fromkeys(lines))


def test_disagreeing_and_stale_sources_through_the_cli(
    chat_server, search_server, tmp_path, monkeypatch, capsys
):
    chat_server.brain = CarefulBrain(subtasks=1, scores=[90])
    search_server.page_text = lambda query, n: PAGES[min(n, 4)][1]
    search_server.published_for = lambda query, n: PAGES[min(n, 4)][0]
    search_server.url_for = lambda query, n: f"https://bench{min(n, 4)}.example/page"
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "runs.sqlite"))
    monkeypatch.setenv("DEEP_RESEARCH_MAX_ITERATIONS", "1")
    monkeypatch.setenv("DEEP_RESEARCH_MIN_ITERATIONS", "1")
    report_file = tmp_path / "report.md"
    assert main(["run", QUESTION, "--output", str(report_file), "--quiet"]) == 0
    report = report_file.read_text()
    body, sources = report.split("\n## Sources\n")
    number = {
        url: int(n) for n, url in re.findall(r"^- \[(\d+)\] .*? — (https://\S+)", sources, re.M)
    }
    old, new = number["https://bench1.example/page"], number["https://bench2.example/page"]
    stated = [line for line in body.splitlines() if "disagree" in line]
    assert stated, body
    line = stated[0]
    assert "1,100" in line and "1,500" in line and f"[{old}]" in line and f"[{new}]" in line
    assert f"The figure of [{new}] is current" in line
    assert all("disagree" in line for line in body.splitlines() if "1,100" in line)  # never current
    assert "zstd-lite" not in body and "900 MB/s" not in body  # the near-miss is set aside
    assert re.search(r"bench2\.example/page \(2024-05-10\)", sources)
    assert re.search(r"bench1\.example/page \(2021-03-02\)", sources)
    assert report.startswith(f"# {QUESTION}\n\n## Summary")
    assert capsys.readouterr().err == ""
