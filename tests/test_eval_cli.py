"""`deep-research eval` end to end over the sample set: stand-in research and judge servers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SECRET_JUDGE_KEY, SECRET_MODEL_KEY, SECRET_SEARCH_KEY

from deep_research import evaluation
from deep_research.cli.main import main

from stand_ins.judge import CRITERIA_WEIGHTS, WEIGHTS
from stand_ins.loopback import Reply

SAMPLES = Path(evaluation.__file__).parent / "samples" / "tasks.jsonl"
# criterion n scores n and the reference 8 - n (tests/stand_ins/judge.py); by dimension the
# target averages are 1*.75 + 2*.25 = 1.25, (3+4)/2 = 3.5, 5, 6*.6 + 7*.4 = 6.4, each against
# 8 minus itself; total .4*1.25 + .3*3.5 + .2*5 + .1*6.4 = 3.19 against 8 - 3.19 = 4.81
TARGET = {
    "comprehensiveness": 1.25,
    "insight": 3.5,
    "instruction_following": 5.0,
    "readability": 6.4,
}
RELATIVE = {d: v / 8 for d, v in TARGET.items()}
JUDGE_CONTRACTS = {
    "DimensionWeights",
    "DimensionCriteria",
    "CriterionScores",
    "FactJudgments",
    "DistinctStatements",
}


def run_eval(judge_server, out: Path, *extra: str) -> int:
    return main(
        [
            "eval",
            str(SAMPLES),
            "--out-dir",
            str(out),
            "--max-iterations",
            "1",
            "--min-iterations",
            "1",
            "--judge-model",
            "judge-model",
            "--judge-base-url",
            f"{judge_server.url}/v1",
            "--fact-mode",
            "snippets",
            *extra,
        ]
    )


def results(out: Path) -> dict[int, dict]:
    return {
        int(p.parent.name): json.loads(p.read_text()) for p in (out / "tasks").glob("*/result.json")
    }


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path / "eval-a"


def test_eval_scores_the_sample_set_and_a_rerun_skips_it(
    chat_server, search_server, judge_server, folder, capsys
):
    assert run_eval(judge_server, folder) == 0
    out, err = capsys.readouterr()
    scored = results(folder)
    assert sorted(scored) == [1, 2, 3, 4, 5]
    for task_id, result in scored.items():
        race = result["race"]
        with_reference = task_id in (1, 4)  # the samples with a reference report
        assert race["mode"] == ("relative" if with_reference else "absolute")
        assert race["target"] == pytest.approx(TARGET)
        if with_reference:
            assert race["dimensions"] == pytest.approx(RELATIVE)
            assert race["overall"] == pytest.approx(3.19 / 8)  # 0.39875
            assert race["reference_total"] == pytest.approx(4.81)
        else:
            assert race["overall"] == pytest.approx(3.19) and race["reference"] is None
        assert [c["analysis"] for c in race["criteria"]] == [f"criterion {n}" for n in range(1, 8)]
        task = folder / "tasks" / str(task_id)
        criteria = json.loads((task / "criteria.json").read_text())
        assert criteria["dimension_weight"] == WEIGHTS
        assert {
            d: [c["weight"] for c in cs] for d, cs in criteria["criterions"].items()
        } == CRITERIA_WEIGHTS
        fact = result["fact"]
        assert fact["pairs"] > 0 and fact["unique_pairs"] == len(fact["judged"])
        assert fact["supported"] + fact["unsupported"] + fact["unknown"] == fact["unique_pairs"]
        decided = fact["supported"] + fact["unsupported"]
        assert fact["citation_accuracy"] == pytest.approx(fact["supported"] / decided)
        assert (task / "report.md").read_text().startswith("# ")
        assert result["research_usage"]["llm_calls"] > 0 and result["research_seconds"] > 0
        judge_calls = result["judge_usage"]["llm_calls"]
        assert judge_calls >= 5 + 4 + 1 + 1  # weights x5, criteria x4, scores, facts
    # the judge's calls went to the judge, the research calls to the research server
    assert set(judge_server.brain.calls) <= JUDGE_CONTRACTS
    assert not set(chat_server.brain.calls) & JUDGE_CONTRACTS
    assert sum(judge_server.brain.calls.values()) == sum(
        r["judge_usage"]["llm_calls"] for r in scored.values()
    )
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["tasks_scored"] == 5
    groups = summary["groups"]
    assert groups["all"]["race"]["relative"]["overall"] == pytest.approx(
        {"n": 2, "mean": 0.39875, "sd": 0}
    )
    assert groups["all"]["race"]["absolute"]["overall"] == pytest.approx(
        {"n": 3, "mean": 3.19, "sd": 0}
    )
    assert groups["zh"]["tasks"] == 2 and groups["en"]["tasks"] == 3
    supported = sum(r["fact"]["supported"] for r in scored.values())
    decided = sum(r["fact"]["supported"] + r["fact"]["unsupported"] for r in scored.values())
    assert groups["all"]["fact"]["citation_accuracy"] == pytest.approx(supported / decided)
    assert "| all | 2 | 0.399 ± 0.000 |" in out and "| zh |" in out
    assert "5 scored now, 0 scored before, 0 failed" in err
    for path in folder.rglob("*"):  # no key in any file, the checkpoint store included
        if path.is_file():
            data = path.read_bytes()
            for secret in (SECRET_JUDGE_KEY, SECRET_MODEL_KEY, SECRET_SEARCH_KEY):
                assert secret.encode() not in data, path

    requests = (
        len(chat_server.chat_requests),
        len(search_server.searches),
        len(judge_server.requests),
    )
    assert run_eval(judge_server, folder) == 0
    assert "0 scored now, 5 scored before" in capsys.readouterr().err
    assert (
        len(chat_server.chat_requests),
        len(search_server.searches),
        len(judge_server.requests),
    ) == requests


def test_a_crash_midway_resumes_from_the_checkpoint_and_a_failed_judge_is_asked_again(
    chat_server, search_server, judge_server, folder, capsys
):
    def prose_for_lambda(number, body):  # the writer of task 2 fails once its research is done
        text = json.dumps(body["messages"])
        structured = body.get("response_format") or body.get("tools") or "Schema name" in text
        if "AWS Lambda" in text and not structured:
            return Reply(400, {"error": {"message": "scripted", "type": "invalid_request_error"}})
        return None

    def judge_down_for_four_day_weeks(number, body):
        if "four-day work week" in json.dumps(body["messages"]):
            return Reply(400, {"error": {"message": "scripted", "type": "invalid_request_error"}})
        return None

    chat_server.fault = prose_for_lambda
    judge_server.fault = judge_down_for_four_day_weeks
    assert run_eval(judge_server, folder, "--concurrency", "3") == 1
    err = capsys.readouterr().err
    assert "task 2: failed" in err and "task 3: failed" in err and "2 tasks failed" in err
    assert sorted(results(folder)) == [1, 4, 5]
    assert "scripted" in (folder / "tasks" / "3" / "error.txt").read_text()
    lambda_queries = [q for q in search_server.queries if "AWS Lambda" in q]
    assert lambda_queries  # task 2 researched before its writer failed

    chat_server.fault = judge_server.fault = lambda number, body: None
    searches = len(search_server.searches)
    assert run_eval(judge_server, folder) == 0
    assert "2 scored now, 3 scored before, 0 failed" in capsys.readouterr().err
    assert sorted(results(folder)) == [1, 2, 3, 4, 5]
    assert len(search_server.searches) == searches  # task 2 resumed at its writer; 3 judged only
    assert not (folder / "tasks" / "3" / "error.txt").exists()


def test_compare_prints_a_paired_table(chat_server, search_server, judge_server, folder, capsys):
    assert run_eval(judge_server, folder, "--limit", "2") == 0
    other = folder.parent / "eval-b"  # the same two tasks (copied, not paid for again) and a third
    shutil.copytree(folder, other)
    assert run_eval(judge_server, other, "--limit", "3") == 0
    assert "1 scored now, 2 scored before" in capsys.readouterr().err
    capsys.readouterr()
    assert main(["eval", "--compare", str(folder), str(other)]) == 0
    out = capsys.readouterr().out
    assert "| 1 | en | relative | 0.399 | 0.399 | +0.000 |" in out
    assert "| 2 | en | absolute | 3.190 | 3.190 | +0.000 |" in out
    assert "| overall (relative) | 0-1 | 1 | +0.000 | – | 0 | 0 |" in out
    assert "| overall (absolute) | 0-10 | 1 | +0.000 | – | 0 | 0 |" in out
    assert "Unpaired (scored in one folder only, or in different modes): 3" in out


@pytest.mark.parametrize(
    ("args", "lines", "message"),
    [
        ([], None, "eval needs a task file and --out-dir"),
        (["TASKS"], ['{"id": 1, "prompt": "q"}', "{oops"], "line 2: not JSON"),
        (["TASKS"], ['{"id": 1, "prompt": ""}'], "line 1: prompt"),
        (["TASKS"], ['{"id": 1, "prompt": "a"}', '{"id": 1, "prompt": "b"}'], "id 1 appears twice"),
        (["TASKS"], ['{"id": 1, "prompt": "' + "x" * 4001 + '"}'], "task 1: the question is 4001"),
        (
            ["TASKS", "--max-workers", "0"],
            ['{"id": 1, "prompt": "q"}'],
            "--max-workers 0: input should be",
        ),
    ],
)
def test_bad_input_exits_2_before_any_call(
    chat_server, search_server, judge_server, folder, capsys, args, lines, message
):
    tasks = folder.parent / "tasks.jsonl"
    if lines is not None:
        tasks.write_text("\n".join(lines) + "\n")
    argv = ["eval", *[str(tasks) if a == "TASKS" else a for a in args]]
    if lines is not None:
        argv += ["--out-dir", str(folder)]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert chat_server.requests == [] and judge_server.requests == []


def test_an_eval_folder_refuses_other_settings(
    chat_server, search_server, judge_server, folder, capsys
):
    assert run_eval(judge_server, folder, "--limit", "1") == 0
    assert run_eval(judge_server, folder, "--limit", "1", "--max-workers", "3") == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "was started with other settings: max_workers (2 then, 3 now)" in last
    assert len(last) < 300  # the setting that differs, not the whole table


def test_benchmark_style_criteria_and_references_files_are_used(
    chat_server, search_server, judge_server, folder, capsys
):
    tasks = folder.parent / "query.jsonl"
    tasks.write_text(
        json.dumps({"id": 7, "topic": "x", "language": "en", "prompt": "Compare zstd and xz"})
        + "\n"
    )
    references = folder.parent / "reference.jsonl"
    references.write_text(
        json.dumps({"prompt": "Compare zstd and xz", "article": "# Ref\n\nText."}) + "\n"
    )
    criteria = folder.parent / "criteria.jsonl"
    dimensions = ("comprehensiveness", "insight", "instruction_following", "readability")
    line = {
        "id": 7,
        "prompt": "Compare zstd and xz",
        "dimension_weight": dict.fromkeys(dimensions, 0.25),
        "criterions": {
            d: [{"criterion": d, "explanation": "e", "weight": 1.0}] for d in dimensions
        },
    }
    criteria.write_text(json.dumps(line) + "\n")
    argv = [
        "eval",
        str(tasks),
        "--out-dir",
        str(folder),
        "--max-iterations",
        "1",
        "--min-iterations",
        "1",
    ]
    argv += ["--judge-model", "j", "--judge-base-url", f"{judge_server.url}/v1"]
    assert main([*argv, "--criteria", str(criteria), "--references", str(references)]) == 0
    race = results(folder)[7]["race"]
    # criteria 1..4 score 1..4 against 7..4: dimension shares 1/8, 2/8, 3/8, 4/8; totals
    # .25 * (1+2+3+4) = 2.5 and .25 * (7+6+5+4) = 5.5, overall 2.5 / 8
    assert race["mode"] == "relative" and race["overall"] == pytest.approx(0.3125)
    assert list(race["dimensions"].values()) == pytest.approx([0.125, 0.25, 0.375, 0.5])
    assert "DimensionWeights" not in judge_server.brain.calls  # the given criteria were used

    criteria.write_text('{"id": 7, "prompt": "q", "dimension_weight": {}}\n')
    assert main([*argv, "--criteria", str(criteria)]) == 2
    assert "criteria.jsonl line 1" in capsys.readouterr().err


def test_an_eval_folder_refuses_another_task_under_a_known_id(
    chat_server, search_server, judge_server, folder, capsys
):
    assert run_eval(judge_server, folder, "--limit", "1") == 0
    changed = folder.parent / "changed.jsonl"
    changed.write_text(json.dumps({"id": 1, "prompt": "Something else entirely"}) + "\n")
    argv = ["eval", str(changed), "--out-dir", str(folder), "--max-iterations", "1"]
    argv += ["--min-iterations", "1", "--judge-model", "judge-model", "--fact-mode", "snippets"]
    calls = len(chat_server.chat_requests)
    assert main(argv) == 2
    assert "task 1 in" in capsys.readouterr().err and len(chat_server.chat_requests) == calls
