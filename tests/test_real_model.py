"""The real CLI against a real model server (Gemma 3 270M on llama-cpp-python in `.ci/run`).

Skipped unless `DEEP_RESEARCH_REAL_MODEL_URL` names an OpenAI-compatible base URL (as the
PostgreSQL tests need their server). It proves the plumbing and the honesty, not the prose: a
270M base model writes little worth reading, so the test checks that the run ends with a
documented exit code, names the structured-output method it settled on, never returns the
prompt (or any degenerate reply) as the report, and that every [n] resolves to a listed source.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stand_ins.documents import LOG_ARCHIVES as CORPUS
from stand_ins.documents import LOG_ARCHIVES_QUESTION as QUESTION

REAL_MODEL_URL = os.environ.get("DEEP_RESEARCH_REAL_MODEL_URL", "")
pytestmark = pytest.mark.skipif(
    not REAL_MODEL_URL, reason="set DEEP_RESEARCH_REAL_MODEL_URL to a model server to run this"
)
SCAFFOLDING = ("Research notes:", "<data>", "</data>", "Schema name:", "Sources:\n<")


@pytest.mark.timeout(1600)  # the run's own limit is 1500 s; pytest's default 600 s is less
def test_the_cli_runs_end_to_end_on_a_real_model(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in CORPUS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    env = {
        **os.environ,
        "OPENAI_BASE_URL": REAL_MODEL_URL,
        "DEEP_RESEARCH_MODEL": os.environ.get("DEEP_RESEARCH_REAL_MODEL", "gemma-3-270m"),
        "DEEP_RESEARCH_CHECKPOINT_DB": str(tmp_path / "runs.sqlite"),
        "XDG_DATA_HOME": str(tmp_path / "data"),  # the capability memory starts empty
        # Its workers' model is offered tools (the default), which a 270M base model cannot
        # call: the run must still end, through the fixed loop (conftest turns tools off).
        "DEEP_RESEARCH_WORKER_TOOLS": "auto",
    }
    for name in ("OPENAI_API_KEY", "TAVILY_API_KEY", "OPENAI_API_BASE"):
        env.pop(name, None)
    cli = str(Path(sys.executable).with_name("deep-research"))  # the installed console script
    run = [cli, "run", QUESTION, "--search", "local"]
    run += ["--corpus", str(corpus), "--max-iterations", "1", "--min-iterations", "1"]
    run += ["--json", str(tmp_path / "run.json"), "--output", str(tmp_path / "report.md")]
    done = subprocess.run(run, env=env, capture_output=True, text=True, timeout=1500)
    print(done.stderr[-4000:])  # shown when the test fails: what the run said
    # A documented end (README, "Exit codes"): 0 done, or 3 when the 270M model's own search
    # queries found nothing in the folder (seen in CI: it searched for "depth_first").
    assert done.returncode in (0, 3), done.stderr[-2000:]
    method = r"structured output[^\n]*: (json_schema|json_object|tool_calling|prompt)"
    assert re.search(method, done.stderr), "the progress names the method settled on"
    assert "local-model profile (loopback OPENAI_BASE_URL)" in done.stderr
    # Offered tools, the worker either called one or said it fell back to the fixed loop (seen
    # with .ci/llama.sh's Gemma: "made no usable tool call (...); fixed search loop").
    assert re.search(r"worker \d+ \(round \d+\) (acted \(|made no usable tool call)", done.stderr)

    output = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert output["structured_output"], "the output names the method per model"
    assert not any(mark in report for mark in SCAFFOLDING), "the prompt came back as the report"
    if output["report_problem"]:  # the model could not write one: the note says so honestly
        assert "No report: the writer model's reply could not be used" in report
    if done.returncode == 3:  # no evidence: said so, and nothing is cited
        assert output["stop_reason"] == "no_evidence" and output["sources"] == []
    listed = {source["number"] for source in output["sources"]}  # the report cites by number
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", report)}
    assert cited <= listed, f"citations {sorted(cited - listed)} resolve to no listed source"
    for source in output["sources"]:
        assert source["url"].startswith("file://")
