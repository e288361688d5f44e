"""`eval` as its own client: given articles (no research), the judge's own limits, clipping,
two systems compared, a benchmark-sized criteria set. Stand-in judge and pages on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from deep_research.cli.main import main
from deep_research.evaluation.contracts import DimensionWeights
from deep_research.evaluation.judge import Judge, JudgeConfig, JudgeFailed, judge_endpoint
from deep_research.evaluation.prompts import judge_weights
from deep_research.state import Usage

from stand_ins.judge import WEIGHTS, target_score

PROMPTS = [
    "How did wooden toy train prices change in a made-up valley in the 1990s?",
    "Which made-up valley workshops sold the most toy trains, and why?",
]


def articles_file(folder: Path, name: str, pages_url: str, extra: str = "") -> Path:
    """Two reports of a made-up system, citing the stand-in site by Markdown links."""
    lines = [
        {
            "id": n,
            "prompt": prompt,
            "article": f"# Report {n} by {name}\n\n"
            f"- zstd level 19 compresses logs 11.2x ([site]({pages_url}/zstd-article)).\n"
            f"- Omega is 77 ([long]({pages_url}/long)).\n- Prices rose by 9 coins.\n" + extra,
        }
        for n, prompt in enumerate(PROMPTS, 1)
    ]
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def score_articles(judge_server, articles: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "eval",
            "--articles",
            str(articles),
            "--out-dir",
            str(out),
            "--judge-model",
            "judge-model",
            "--judge-base-url",
            f"{judge_server.url}/v1",
            "--set",
            "fetch_private_addresses=true",
            *extra,
        ]
    )


def judge_bodies(judge_server) -> list[dict]:
    return [r["body"] for r in judge_server.requests if r["path"].endswith("/chat/completions")]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-research-key-unused")
    return tmp_path


def test_given_articles_are_scored_with_no_research_call(judge_server, page_server, here, capsys):
    articles = articles_file(here, "other-system", page_server.url)
    assert score_articles(judge_server, articles, here / "a") == 0
    out = capsys.readouterr().out
    results = [json.loads(p.read_text()) for p in sorted((here / "a/tasks").glob("*/result.json"))]
    assert len(results) == 2
    for result in results:
        assert result["research_usage"]["llm_calls"] == 0 and result["thread_id"] == ""
        fact = result["fact"]  # pairs extracted by the judge, pages read whole and judged
        assert fact["mode"] == "pages" and fact["pairs"] == 2 and fact["supported"] == 2
        assert fact["pages_read"] == 2 and fact["pages_unreadable"] == 0
        assert result["race"]["mode"] == "absolute"
    assert judge_server.brain.calls["CitedFacts"] == 2
    assert sorted(page_server.served) == ["/long", "/zstd-article"]  # once for both tasks
    manifest = json.loads((here / "a/eval.json").read_text())
    assert manifest["system"] == "other-system" and manifest["settings"] is None
    assert manifest["judge"]["model"] == "judge-model" and manifest["mode"]["fact"] == "pages"
    assert len(manifest["articles"]["sha256"]) == 64
    assert "Citations judged against the full pages" in out
    assert "Clipped tasks (an article cut to fit the judge's context): 0" in out


def test_judge_requests_carry_the_judges_own_cap_not_the_research_settings(
    judge_server, page_server, here
):
    articles = articles_file(here, "sys", page_server.url)
    research_limits = ["--set", "reviewer_max_tokens=400", "--set", "max_context_tokens=8192"]
    assert score_articles(judge_server, articles, here / "a", *research_limits) == 0
    caps = {body.get("max_tokens") for body in judge_bodies(judge_server)}
    assert caps == {32_000}  # the judge's default, though research's reviewer cap is 400
    judge_server.requests.clear()
    own = ["--judge-max-tokens", "50000", "--judge-context-tokens", "200000"]
    assert score_articles(judge_server, articles, here / "b", *research_limits, *own) == 0
    assert {body.get("max_tokens") for body in judge_bodies(judge_server)} == {50_000}


def test_a_clipped_task_is_counted_and_makes_race_not_comparable(
    judge_server, page_server, here, capsys
):
    long = "Filler sentence about toy trains and their many carriages. " * 900  # ~13 k tokens
    articles = articles_file(here, "sys", page_server.url, extra=long)
    flags = ["--judge-context-tokens", "8000", "--fact-mode", "none", "--limit", "1"]
    assert score_articles(judge_server, articles, here / "a", *flags) == 0
    summary = json.loads((here / "a/summary.json").read_text())
    assert summary["clipped_tasks"] == 1 and summary["clipped_ids"] == ["1"]
    assert summary["race_comparable"] is False and summary["fact_mode"] == "none"
    markdown = (here / "a/summary.md").read_text()
    assert "Clipped tasks (an article cut to fit the judge's context): 1" in markdown
    assert "RACE is not comparable" in markdown
    assert "RACE is not comparable" in capsys.readouterr().out
    # the same report in a window that holds it: nothing clipped, comparable
    flags[1] = "128000"
    assert score_articles(judge_server, articles, here / "b", *flags) == 0
    summary = json.loads((here / "b/summary.json").read_text())
    assert summary["clipped_tasks"] == 0 and summary["race_comparable"] is True


def test_judge_timeout_bounds_a_stalling_judge(judge_server, here, capsys):
    judge_server.fault = lambda number, body: time.sleep(4)  # never answers in time
    config = JudgeConfig(model="judge-model", timeout=0.5, retries=0)
    judge = Judge(config, judge_endpoint(f"{judge_server.url}/v1"))
    usage: list[Usage] = []
    started = time.monotonic()
    with pytest.raises(JudgeFailed, match=r"within --judge-timeout 0\.5 s"):
        asyncio.run(judge.ask(DimensionWeights, judge_weights("q"), usage))
    assert time.monotonic() - started < 3
    # through the command: the task fails (exit 1) with the same cause, quickly
    articles = here / "arts.jsonl"
    articles.write_text(json.dumps({"id": 1, "prompt": "q?", "article": "A report."}) + "\n")
    started = time.monotonic()
    code = score_articles(
        judge_server, articles, here / "a", "--judge-timeout", "0.5", "--judge-retries", "0"
    )
    assert code == 1 and time.monotonic() - started < 8
    assert "--judge-timeout 0.5 s" in (here / "a/tasks/1/error.txt").read_text()


def test_two_systems_compare_side_by_side_and_a_different_judge_is_refused(
    judge_server, page_server, here, capsys
):
    one = articles_file(here, "system-one", page_server.url)
    two = articles_file(here, "system-two", page_server.url)
    assert score_articles(judge_server, one, here / "one", "--fact-mode", "none") == 0
    assert score_articles(judge_server, two, here / "two", "--fact-mode", "none") == 0
    other_judge = ["--fact-mode", "none", "--judge-max-tokens", "9000"]
    assert score_articles(judge_server, two, here / "three", *other_judge) == 0
    capsys.readouterr()
    assert main(["eval", "--compare", str(here / "one"), str(here / "two")]) == 0
    out = capsys.readouterr().out
    assert "(system-one)" in out and "(system-two)" in out
    assert "| overall (absolute) | 0-10 | 2 | +0.000 |" in out
    assert "relative)" not in out  # no reference: only absolute rows, never pooled
    assert main(["eval", "--compare", str(here / "one"), str(here / "three")]) == 2
    err = capsys.readouterr().err
    assert "not scored alike" in err and "judge:" in err and "9000" in err
    assert (
        main(["eval", "--compare", str(here / "one"), str(here / "three"), "--allow-mismatch"]) == 0
    )
    assert "warning: not scored alike: judge:" in capsys.readouterr().out


def test_a_benchmark_sized_criteria_set_is_scored(judge_server, page_server, here):
    """32 criteria (8 per dimension, as many as the benchmark's largest sets)."""
    judge_server.brain.criteria_per_dimension = 8
    articles = articles_file(here, "sys", page_server.url)
    assert score_articles(judge_server, articles, here / "a", "--fact-mode", "none") == 0
    race = json.loads((here / "a/tasks/1/result.json").read_text())["race"]
    assert len(race["criteria"]) == 32
    scores = [target_score(n) for n in range(1, 33)]
    assert [c["target_score"] for c in race["criteria"]] == scores
    by_dimension = {d: sum(scores[i * 8 : i * 8 + 8]) / 8 for i, d in enumerate(WEIGHTS)}
    assert race["target"] == pytest.approx(by_dimension)
    assert race["overall"] == pytest.approx(sum(WEIGHTS[d] * v for d, v in by_dimension.items()))


def test_a_separate_fact_judge_checks_the_citations_and_is_priced_as_itself(
    judge_server, page_server, here
):
    articles = articles_file(here, "sys", page_server.url)
    prices = {
        "judge-model": {"input_per_million": 1.0, "output_per_million": 0.0},
        "fact-model": {"input_per_million": 100.0, "output_per_million": 0.0},
    }
    flags = ["--fact-judge-model", "fact-model", "--limit", "1"]
    flags += ["--set", f"prices={json.dumps(prices)}"]
    assert score_articles(judge_server, articles, here / "a", *flags) == 0
    by_model: dict[str, set[str]] = {}
    tokens = {"judge-model": 0, "fact-model": 0}
    for call, body in zip(judge_server.brain.seen, judge_bodies(judge_server), strict=True):
        by_model.setdefault(body["model"], set()).add(call.contract or "prose")
    for body in judge_bodies(judge_server):
        tokens[body["model"]] += len(json.dumps(body["messages"], ensure_ascii=False)) // 4 + 1
    assert by_model["fact-model"] == {"CitedFacts", "FactJudgments"}
    assert "FactJudgments" not in by_model["judge-model"]
    result = json.loads((here / "a/tasks/1/result.json").read_text())
    expected = tokens["judge-model"] * 1.0 / 1e6 + tokens["fact-model"] * 100.0 / 1e6
    assert result["judge_cost_usd"] == pytest.approx(expected)
    assert json.loads((here / "a/eval.json").read_text())["judge"]["fact_model"] == "fact-model"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": 1, "prompt": "q?"}', "line 1: no article"),
        ('{"id": 1, "prompt": "q?", "article": "  "}', "line 1: no article"),
        ("{oops", "line 1: not JSON"),
    ],
)
def test_a_bad_articles_file_is_bad_input(judge_server, here, capsys, line, message):
    articles = here / "bad.jsonl"
    articles.write_text(line + "\n")
    assert score_articles(judge_server, articles, here / "a") == 2
    assert message in capsys.readouterr().err and not judge_server.requests


def test_the_judges_window_is_lowered_to_what_its_server_reports(
    judge_server, page_server, here, capsys
):
    """A llama.cpp-like judge telling an 8,000-token window: prompts fit it, clipping counted."""
    judge_server.info_paths = {"/props": {"default_generation_settings": {"n_ctx": 8000}}}
    long = "Filler sentence about toy trains and their many carriages. " * 900
    articles = articles_file(here, "sys", page_server.url, extra=long)
    assert score_articles(judge_server, articles, here / "a", "--fact-mode", "none") == 0
    assert "reports a 8000-token context window" in capsys.readouterr().err
    summary = json.loads((here / "a/summary.json").read_text())
    assert summary["clipped_tasks"] == 2 and summary["race_comparable"] is False
    for body in judge_bodies(judge_server):
        assert len(json.dumps(body["messages"], ensure_ascii=False)) // 4 < 8000


def test_a_citation_whose_address_does_not_parse_is_kept_as_text(judge_server, page_server, here):
    """`http://[::1` in an article fails no task: its pair is reported, never read or judged."""
    articles = articles_file(here, "sys", page_server.url, "- Loopback ([bad](http://[::1)).\n")
    assert score_articles(judge_server, articles, here / "a") == 0
    for path in sorted((here / "a/tasks").glob("*/result.json")):
        fact = json.loads(path.read_text())["fact"]
        bad = [j for j in fact["judged"] if j["url"] == "http://[::1"]
        assert [j["result"] for j in bad] == ["unknown"] and "does not parse" in bad[0]["reason"]
        assert fact["supported"] == 2
