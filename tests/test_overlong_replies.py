"""One over-long reply (a server that ignores `max_tokens`) is an unusable reply, not the end of
the run: the step re-asks once with the bound restated, else goes on without its answer."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from deep_research.cli.main import main


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", str(tmp_path / "store.sqlite"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def edge_sized(text: str) -> str:
    """A reply with a list as long as the server pleases: 30,000 characters of gaps."""
    value = json.loads(text)
    value["gaps"] = [f"edge case number {n} of the question" for n in range(900)]
    return json.dumps(value)


RUN = ["run", "Compare zstd and xz", "--min-iterations", "1", "--max-iterations", "3"]


def test_an_over_long_gap_analysis_ends_the_gaps_not_the_run(
    chat_server, store, search_server, capsys
):
    chat_server.brain.scores = [60, 60, 60]
    chat_server.reply_wrapper = lambda text, call: (
        edge_sized(text) if call.contract == "GapAnalysis" else text
    )
    args = [*RUN, "--output", "r.md", "--json", "out.json", "--thread-id", "overlong"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "reviewer reply unusable (the reviewer reply ran past max_tokens (400)" in err
    assert "round 1: gap analysis failed, no further round: GapAnalysis" in err
    output = json.loads((store / "out.json").read_text())
    assert output["stop_reason"] == "gaps_failed"
    paid = output["usage"]["by_role"]["reviewer"]["output_tokens"]
    assert paid > 2 * 20_000 // 4  # the two over-long replies were paid for, and are counted
    assert "gap analysis failed" in output["report_problem"]
    assert "ran past max_tokens (400)" in output["report_problem"]
    assert chat_server.brain.calls["GapAnalysis"] == 2  # asked once more, then went on
    asks = [json.dumps(r["body"]["messages"]) for r in chat_server.chat_requests]
    assert sum("limit of 400 tokens" in ask for ask in asks) == 1  # the bound restated
    reask = next(r for r in chat_server.chat_requests if "limit of 400" in json.dumps(r["body"]))
    roles = [m["role"] for m in reask["body"]["messages"]]
    assert all(a != b for a, b in pairwise(roles))  # turns still alternate
    assert (store / "r.md").read_text().startswith("# ")  # the round-1 report is handed back


def test_an_over_long_report_is_asked_again_once_shorter(chat_server, store, search_server, capsys):
    written = []

    def first_too_long(text, call):
        if call.contract is None and call.method == "prose" and "# " in text:
            written.append(text)
            return text + " filler" * 20_000 if len(written) == 1 else text
        return text

    chat_server.reply_wrapper = first_too_long
    assert main([*RUN, "--max-iterations", "1", "--output", "r.md", "--thread-id", "w"]) == 0
    err = capsys.readouterr().err
    assert "writer reply unusable (the writer reply ran past max_tokens (1500)" in err
    assert "filler" not in (store / "r.md").read_text() and len(written) == 2
