"""Benchmark mode: tasks, criteria, references and prompts read from a tree laid out like
DeepResearch Bench's repository (`tests/fixtures/bench`, made-up content), scored as its code
does; and, when a real clone is named, our arithmetic against the benchmark's own code."""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import os
import random
from pathlib import Path

import pytest

from deep_research.cli.main import main
from deep_research.evaluation.bench import criteria_json, prompt_constant, weighted_scores
from deep_research.evaluation.records import TaskCriteria

from stand_ins.judge import target_score

FIXTURE = Path(__file__).parent / "fixtures" / "bench"
SYSTEM = FIXTURE / "data/test_data/cleaned_data/toy-system.jsonl"
CLONE_VARIABLE = "DEEP_RESEARCH_BENCH_DIR"  # a checked-out clone of the benchmark, if any


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def bench_eval(judge_server, out: Path, *extra: str) -> int:
    return main(
        [
            "eval",
            "--bench-dir",
            str(FIXTURE),
            "--articles",
            str(SYSTEM),
            "--out-dir",
            str(out),
            "--judge-model",
            "judge-model",
            "--judge-base-url",
            f"{judge_server.url}/v1",
            "--fact-mode",
            "none",
            *extra,
        ]
    )


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_judge_gets_the_benchmarks_own_prompts_from_the_clone(judge_server, here, capsys):
    assert bench_eval(judge_server, here / "a", "--skip-cleaning") == 0
    out = capsys.readouterr().out
    prose = [c for c in judge_server.brain.seen if c.contract is None]
    assert len(prose) == 2 and judge_server.brain.calls.keys() == {"prose"}  # no own prompts
    tasks = {t["prompt"]: t for t in rows(FIXTURE / "data/prompt_data/query.jsonl")}
    references = {r["prompt"]: r["article"] for r in rows(FIXTURE / CLEANED_REFERENCE)}
    criteria = {c["prompt"]: c for c in rows(FIXTURE / "data/criteria_data/criteria.jsonl")}
    articles = {a["prompt"]: a["article"] for a in rows(SYSTEM)}
    sent = sorted(call.user for call in prose)
    expected = []
    for prompt, task in tasks.items():
        template = prompt_constant(
            FIXTURE / f"prompt/score_prompt_{task['language']}.py", "generate_merged_score_prompt"
        )
        assert template.startswith(f"FIXTURE SCORE {task['language'].upper()}")
        shown = {
            d: [{"criterion": c["criterion"], "explanation": c["explanation"]} for c in cs]
            for d, cs in criteria[prompt]["criterions"].items()
        }
        expected.append(
            template.format(
                task_prompt=prompt,
                article_1=articles[prompt],
                article_2=references[prompt],
                criteria_list=json.dumps(shown, ensure_ascii=False, indent=2),
            )
        )
    assert sent == sorted(expected)  # byte for byte what the clone's files make
    assert all(call.system == "" for call in prose)  # one user message, as the benchmark sends
    # scored as the benchmark does: criterion n scores n (1..8 round), the reference 8 - that
    result = json.loads((here / "a/tasks/1/result.json").read_text())["race"]
    task_criteria = TaskCriteria.model_validate(criteria[tasks_by_id(tasks)[1]])
    assert len(result["criteria"]) == 31  # a benchmark-sized set
    assert result["overall"] == pytest.approx(expected_overall(task_criteria))
    manifest = json.loads((here / "a/eval.json").read_text())
    assert manifest["mode"]["prompts"] == "DeepResearch Bench"
    assert manifest["criteria"]["file"] == "criteria.jsonl"
    # calibration: the clone's published figure for the system, beside ours
    line = next(x for x in out.splitlines() if x.startswith("calibration for toy-system"))
    ours = json.loads((here / "a/summary.json").read_text())["groups"]["all"]["race"]
    assert f"ours overall {ours['relative']['overall']['mean']:.4f} on 2 tasks" in line
    assert line.endswith(
        "published by the benchmark: Comprehensiveness 0.4100, Insight 0.4200, "
        "Instruction Following 0.4300, Readability 0.4400, Overall Score 0.4250"
    )


CLEANED_REFERENCE = "data/test_data/cleaned_data/reference.jsonl"


def tasks_by_id(tasks: dict[str, dict]) -> dict[int, str]:
    return {t["id"]: prompt for prompt, t in tasks.items()}


def expected_overall(criteria: TaskCriteria) -> float:
    """Target total / (target + reference total), from the stand-in's known scores."""
    n, target, reference = 0, 0.0, 0.0
    for dimension, items in criteria.criterions.items():
        scores = []
        for item in items:
            n += 1
            scores.append((item.weight, target_score(n)))
        total = sum(w for w, _ in scores)
        t = sum(w * s for w, s in scores) / total
        r = sum(w * (8 - s) for w, s in scores) / total
        target += criteria.dimension_weight[dimension] * t
        reference += criteria.dimension_weight[dimension] * r
    return target / (target + reference)


def test_articles_are_cleaned_with_the_benchmarks_cleaning_prompt(judge_server, here):
    assert bench_eval(judge_server, here / "a", "--limit", "1") == 0
    prose = [c.user for c in judge_server.brain.seen if c.contract is None]
    template = prompt_constant(FIXTURE / "prompt/clean_prompt.py", "clean_article_prompt_en")
    article = rows(SYSTEM)[0]["article"]
    assert prose[0] == template.format(article=article)
    assert 'First article: "CLEANED ' in prose[1]  # the cleaned text is what gets scored


def test_a_folder_that_is_not_a_clone_is_bad_input(judge_server, here, capsys):
    code = main(["eval", "--bench-dir", str(here), "--out-dir", str(here / "a")])
    assert code == 2
    assert "is not a DeepResearch Bench clone: no data/prompt_data/query.jsonl" in (
        capsys.readouterr().err
    )


def test_criteria_are_matched_by_text_as_the_benchmark_does():
    criteria = TaskCriteria.model_validate(rows(FIXTURE / "data/criteria_data/criteria.jsonl")[1])
    names = {d: [c.criterion for c in cs] for d, cs in criteria.criterions.items()}
    reply = {
        "comprehensiveness": [  # exact; then upper-cased (case-insensitive match)
            {
                "criterion": names["comprehensiveness"][0],
                "article_1_score": 8,
                "article_2_score": 4,
            },
            {"criterion": names["comprehensiveness"][1].upper(), "article_1_score": "6"},
        ],
        "insight": [  # a substring of the criterion; then an unknown text: the mean weight
            {"criterion": names["insight"][0][:20], "article_1_score": 2, "article_2_score": 2},
            {"criterion": "something else", "article_1_score": 10, "article_2_score": 0},
        ],
        "instruction_following": [
            {"criterion": names["instruction_following"][0], "target_score": 5}
        ],
        "readability": [
            {"criterion": names["readability"][0], "article_1_score": 0, "article_2_score": 0}
        ],
        "not_a_dimension": [{"criterion": "x", "article_1_score": 10}],
    }
    score = weighted_scores(reply, criteria)
    w = {d: [c.weight for c in cs] for d, cs in criteria.criterions.items()}
    comp = w["comprehensiveness"]
    comp_t = (8 * comp[0] + 6 * comp[1]) / sum(comp)
    # the benchmark keeps the reference average only if the last item had a reference score
    assert score.target["comprehensiveness"] == pytest.approx(comp_t)
    assert score.reference["comprehensiveness"] == 0
    mean = sum(w["insight"]) / 2
    ins_t = (2 * w["insight"][0] + 10 * mean) / (w["insight"][0] + mean)
    ins_r = (2 * w["insight"][0] + 0 * mean) / (w["insight"][0] + mean)
    assert score.target["insight"] == pytest.approx(ins_t)
    assert score.reference["insight"] == pytest.approx(ins_r)
    assert score.dimensions["readability"] == 0  # 0 against 0 scores 0 there, not a tie
    assert score.dimensions["instruction_following"] == 1.0  # no reference score: 5 / (5 + 0)
    assert score.overall == pytest.approx(
        score.target_total / (score.target_total + score.reference_total)
    )


def _their_scoring(clone: Path):
    """The benchmark's own `calculate_weighted_scores`, loaded from the clone's file."""
    spec = importlib.util.spec_from_file_location(
        "drb_score_calculator", clone / "utils/score_calculator.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.calculate_weighted_scores


def _their_criteria_list(clone: Path):
    """The benchmark's `format_criteria_list` (how it shows criteria to the judge), taken out of
    its script by `ast` (the script itself imports a Gemini client)."""
    source = (clone / "deepresearch_bench_race.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    (function,) = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "format_criteria_list"
    ]
    namespace = {"json": json, "logger": logging.getLogger("drb")}
    exec(compile(ast.Module([function], []), "deepresearch_bench_race.py", "exec"), namespace)
    return namespace["format_criteria_list"]


def _their_shares(scores: dict) -> tuple[float, dict[str, float]]:
    """The overall and per-dimension shares, as `process_single_item` computes them."""
    t, r = scores["target"]["total"], scores["reference"]["total"]
    overall = t / (t + r) if t + r > 0 else 0
    dims = {}
    for dim in ("comprehensiveness", "insight", "instruction_following", "readability"):
        key = f"{dim}_weighted_avg"
        a, b = scores["target"]["dims"].get(key), scores["reference"]["dims"].get(key)
        dims[dim] = 0 if a is None or a + b <= 0 else a / (a + b)
    return overall, dims


def _fixed_reply(criteria: dict, rng: random.Random) -> dict:
    """A judge reply on every criterion, with the slips real judges make: changed case, a
    shortened text, an unknown criterion, a score written as a string."""
    reply = {}
    for dim, items in criteria["criterions"].items():
        reply[dim] = []
        for item in items:
            text = item["criterion"]
            slip = rng.random()
            if slip < 0.1:
                text = text.upper()
            elif slip < 0.15:
                text = text[: max(4, len(text) // 2)]
            elif slip < 0.18:
                text = "an invented criterion"
            first = round(rng.uniform(0, 10), 1)
            reply[dim].append(
                {
                    "criterion": text,
                    "analysis": "fixed",
                    "article_1_score": str(first) if slip > 0.95 else first,
                    "article_2_score": round(rng.uniform(0, 10), 1),
                }
            )
    return reply


@pytest.mark.skipif(
    not os.environ.get(CLONE_VARIABLE), reason=f"${CLONE_VARIABLE} names no benchmark clone"
)
def test_our_scoring_equals_the_benchmarks_code_on_the_same_replies():
    """On fixed judge replies for every task of the clone's criteria file, our arithmetic gives
    what the benchmark's own scoring code gives; the criteria are shown as its code shows them."""
    clone = Path(os.environ[CLONE_VARIABLE])
    theirs = _their_scoring(clone)
    shown = _their_criteria_list(clone)
    rng = random.Random(24)
    checked = 0
    for row in rows(clone / "data/criteria_data/criteria.jsonl"):
        assert criteria_json(TaskCriteria.model_validate(row)) == shown(row), row["id"]
        reply = _fixed_reply(row, rng)
        overall, dims = _their_shares(theirs(json.loads(json.dumps(reply)), row, "en"))
        ours = weighted_scores(reply, TaskCriteria.model_validate(row))
        assert ours.overall == pytest.approx(overall, abs=1e-12), row["id"]
        assert ours.dimensions == pytest.approx(dims, abs=1e-12), row["id"]
        checked += 1
    assert checked == 100  # every task of the benchmark's v1.0 criteria file


def test_an_article_too_long_for_the_judge_is_cut_and_counted(judge_server, here):
    prompt = rows(FIXTURE / "data/prompt_data/query.jsonl")[0]["prompt"]
    long = here / "long.jsonl"
    article = "A long report on toy trains and carriages. " * 2000  # ~22 k tokens
    long.write_text(json.dumps({"id": 1, "prompt": prompt, "article": article}) + "\n")
    argv = ["eval", "--bench-dir", str(FIXTURE), "--articles", str(long), "--out-dir"]
    argv += [str(here / "a"), "--judge-model", "judge-model", "--fact-mode", "none"]
    argv += ["--judge-base-url", f"{judge_server.url}/v1", "--judge-context-tokens", "8000"]
    assert main(argv) == 0
    clean, score = [c.user for c in judge_server.brain.seen if c.contract is None]
    assert len(clean) < len(article) and len(score) < 8000 * 4  # both fitted to the window
    summary = json.loads((here / "a/summary.json").read_text())
    assert summary["clipped_tasks"] == 1 and summary["race_comparable"] is False


def test_fact_in_benchmark_mode_uses_the_benchmarks_fact_prompts(judge_server, page_server, here):
    """Extraction, deduplication and validation prompts come from the clone's utils/ files;
    the pages are still read whole through the guarded reader."""
    prompt = rows(FIXTURE / "data/prompt_data/query.jsonl")[0]["prompt"]
    site = page_server.url
    article = (
        f"# Trains\n\n- zstd level 19 compresses logs 11.2x ([a]({site}/zstd-article)).\n"
        f"- zstd level 19 compresses logs 11.2x (again) ([a]({site}/zstd-article)).\n"
        f"- Omega is 9999 ([b]({site}/long)).\n" + "Padding words for the cleaner. " * 5
    )
    given = here / "cited.jsonl"
    given.write_text(json.dumps({"id": 1, "prompt": prompt, "article": article}) + "\n")
    argv = ["eval", "--bench-dir", str(FIXTURE), "--articles", str(given), "--out-dir"]
    argv += [str(here / "a"), "--judge-model", "judge-model", "--skip-cleaning"]
    argv += ["--judge-base-url", f"{judge_server.url}/v1", "--set", "fetch_private_addresses=true"]
    assert main(argv) == 0
    sent = [c.user for c in judge_server.brain.seen if c.contract is None]
    fact_prompts = [u for u in sent if not u.startswith("FIXTURE SCORE")]
    extract = prompt_constant(FIXTURE / "utils/extract.py", "prompt_template_en")
    assert fact_prompts[0] == extract.format(report_text=article)  # the clone's own wording
    assert sum(u.startswith("FIXTURE DEDUP") for u in fact_prompts) == 1
    assert sum(u.startswith("FIXTURE VALIDATE") for u in fact_prompts) == 2
    assert judge_server.brain.calls.keys() == {"prose"}  # none of our contracts was asked
    fact = json.loads((here / "a/tasks/1/fact.json").read_text())
    verdicts = {j["url"].rsplit("/", 1)[1]: j["result"] for j in fact["judged"]}
    assert verdicts == {
        "zstd-article": "supported",
        "long": "unsupported",
    }  # 9999 is not on the page
    assert fact["pairs"] == 3 and fact["unique_pairs"] == 2 and fact["pages_read"] == 2
