"""The eval arithmetic against hand-computed values: weights, RACE scores, summary, compare."""

from __future__ import annotations

import pytest

from deep_research.evaluation.compare import Comparison
from deep_research.evaluation.contracts import (
    CriterionScore,
    CriterionScores,
    DimensionCriteria,
    DimensionWeights,
    DistinctStatements,
    FactJudgments,
)
from deep_research.evaluation.criteria import combine_weights
from deep_research.evaluation.race import clean_article, criteria_block, race_score
from deep_research.evaluation.records import FactScore, RaceScore, TaskCriteria, TaskResult
from deep_research.evaluation.summary import summarize

WEIGHTS = {
    "comprehensiveness": 0.4,
    "insight": 0.3,
    "instruction_following": 0.2,
    "readability": 0.1,
}


def criteria(comprehensiveness=(0.75, 0.25)) -> TaskCriteria:
    weights = {
        "comprehensiveness": comprehensiveness,
        "insight": (0.5, 0.5),
        "instruction_following": (1.0,),
        "readability": (0.6, 0.4),
    }
    return TaskCriteria(
        id=1,
        prompt="q",
        dimension_weight=WEIGHTS,
        criterions={
            d: [{"criterion": f"{d} {n}", "weight": w} for n, w in enumerate(ws, 1)]
            for d, ws in weights.items()
        },
    )


TARGET = [8, 4, 6, 2, 9, 5, 10]
REFERENCE = [4, 8, 6, 6, 3, 5, 0]


def scores(target, reference=None) -> list[CriterionScore]:
    return [
        CriterionScore(
            criterion=n,
            target_score=t,
            reference_score=None if reference is None else reference[n - 1],
        )
        for n, t in enumerate(target, 1)
    ]


def test_relative_score_is_target_over_target_plus_reference_per_dimension_and_total():
    race = race_score(criteria(), scores(TARGET, REFERENCE))
    # comprehensiveness: target 8*.75 + 4*.25 = 7, reference 4*.75 + 8*.25 = 5
    # insight: (6+2)/2 = 4 and (6+6)/2 = 6; instruction following: 9 and 3
    # readability: 5*.6 + 10*.4 = 7 and 5*.6 + 0*.4 = 3
    assert race.mode == "relative"
    assert race.target == pytest.approx(
        {"comprehensiveness": 7, "insight": 4, "instruction_following": 9, "readability": 7}
    )
    assert race.reference == pytest.approx(
        {"comprehensiveness": 5, "insight": 6, "instruction_following": 3, "readability": 3}
    )
    assert race.dimensions == pytest.approx(
        {
            "comprehensiveness": 7 / 12,
            "insight": 0.4,
            "instruction_following": 0.75,
            "readability": 0.7,
        }
    )
    # totals: .4*7 + .3*4 + .2*9 + .1*7 = 6.5 and .4*5 + .3*6 + .2*3 + .1*3 = 4.7
    assert race.target_total == pytest.approx(6.5) and race.reference_total == pytest.approx(4.7)
    # overall = 6.5 / 11.2, not the weighted mean of the dimension shares (0.5733...)
    assert race.overall == pytest.approx(6.5 / 11.2) and race.overall == pytest.approx(
        0.580357, abs=1e-6
    )


def test_absolute_score_is_the_weighted_0_to_10_scale():
    race = race_score(criteria(), scores(TARGET))
    assert race.mode == "absolute" and race.reference is None
    assert race.dimensions == pytest.approx(
        {"comprehensiveness": 7, "insight": 4, "instruction_following": 9, "readability": 7}
    )
    assert race.overall == pytest.approx(6.5)


def test_criterion_weights_that_miss_one_are_averaged_by_their_own_sum():
    race = race_score(criteria(comprehensiveness=(0.5, 0.3)), scores(TARGET))
    assert race.target["comprehensiveness"] == pytest.approx((8 * 0.5 + 4 * 0.3) / 0.8)  # 6.5


def test_a_tie_at_zero_is_a_tie():
    race = race_score(criteria(), scores([0] * 7, [0] * 7))
    assert race.overall == 0.5 and set(race.dimensions.values()) == {0.5}


def test_weight_samples_are_averaged_normalised_and_rounded_to_sum_one():
    samples = [
        DimensionWeights(
            comprehensiveness=0.3, insight=0.3, instruction_following=0.2, readability=0.2
        ),
        DimensionWeights(
            comprehensiveness=0.35, insight=0.25, instruction_following=0.25, readability=0.15
        ),
        DimensionWeights(
            comprehensiveness=0.4, insight=0.3, instruction_following=0.2, readability=0.1
        ),
    ]
    # means .35, .28333, .21667, .15
    assert combine_weights(samples) == {
        "comprehensiveness": 0.35,
        "insight": 0.28,
        "instruction_following": 0.22,
        "readability": 0.15,
    }
    # a sample summing to 1.01 is normalised: .41/1.01 = .4059 -> .41, and the four round to
    # 1.01, so the largest gives the .01 back
    over = DimensionWeights(
        comprehensiveness=0.41, insight=0.3, instruction_following=0.2, readability=0.1
    )
    assert combine_weights([over]) == {
        "comprehensiveness": 0.40,
        "insight": 0.30,
        "instruction_following": 0.20,
        "readability": 0.10,
    }
    # .336, .336, .328, 0 round to .34 + .34 + .33 + 0 = 1.01: the first largest gives way,
    # and readability (0) never turns negative
    thirds = DimensionWeights(
        comprehensiveness=0.336, insight=0.336, instruction_following=0.328, readability=0
    )
    assert combine_weights([thirds]) == {
        "comprehensiveness": 0.33,
        "insight": 0.34,
        "instruction_following": 0.33,
        "readability": 0.0,
    }


@pytest.mark.parametrize(
    ("contract", "reply", "message"),
    [
        (
            CriterionScores.for_criteria(3, False),
            {
                "scores": [
                    {"criterion": 1, "target_score": 5},
                    {"criterion": 1, "target_score": 5},
                    {"criterion": 4, "target_score": 5},
                ]
            },
            "missing criteria [2, 3]; unknown or repeated criteria [1, 4]",
        ),
        (
            CriterionScores.for_criteria(1, True),
            {"scores": [{"criterion": 1, "target_score": 5}]},
            "reference_score is missing for criteria [1]",
        ),
        (
            CriterionScores.for_criteria(1, False),
            {"scores": [{"criterion": 1, "target_score": 11}]},
            "less than or equal to 10",
        ),
        (
            DimensionWeights,
            {
                "comprehensiveness": 0.5,
                "insight": 0.5,
                "instruction_following": 0.5,
                "readability": 0,
            },
            "sum to 1.0, not 1.500",
        ),
        (
            DimensionCriteria,
            {"criteria": [{"criterion": "a", "weight": 0.5}, {"criterion": "A ", "weight": 0.5}]},
            "same text",
        ),
        (DistinctStatements.for_statements(2), {"keep": [1, 3]}, "these are not: [3]"),
        (
            FactJudgments.for_statements(2),
            {"judgments": [{"statement": 2, "result": "supported"}]},
            "missing statements [1]",
        ),
    ],
)
def test_judge_replies_that_break_the_rules_fail_validation(contract, reply, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        contract.model_validate(reply)


def test_the_judge_reads_the_report_without_markers_or_sources():
    report = "# T\n\nZstd is fast [1][2]. Xz is small [3].\n\n## Sources\n\n- [1] a — https://a\n"
    assert clean_article(report) == "# T\n\nZstd is fast. Xz is small."
    block = criteria_block(criteria())
    assert "  1. comprehensiveness 1" in block and "  7. readability 2" in block


def result(task_id, language, overall, supported, unsupported, mode="relative") -> TaskResult:
    dimensions = dict.fromkeys(WEIGHTS, overall)
    race = RaceScore(
        mode=mode, dimensions=dimensions, overall=overall, target=dimensions, target_total=overall
    )
    decided = supported + unsupported
    fact = FactScore(
        pairs=decided,
        unique_pairs=decided,
        supported=supported,
        unsupported=unsupported,
        unknown=0,
        citation_accuracy=supported / decided if decided else None,
        effective_citations=supported,
    )
    return TaskResult(
        id=task_id,
        language=language,
        thread_id="t",
        race=race,
        fact=fact,
        research_seconds=10.0 * task_id,
    )


def test_summary_mean_spread_pooled_accuracy_and_languages():
    results = [result(1, "en", 0.4, 2, 1), result(2, "en", 0.5, 1, 3), result(3, "zh", 0.6, 0, 0)]
    summary = summarize(results, expected=4)
    everything = summary["groups"]["all"]
    assert summary["tasks_scored"] == 3 and summary["tasks_expected"] == 4
    assert everything["race"]["relative"]["overall"] == pytest.approx(
        {"n": 3, "mean": 0.5, "sd": 0.1}
    )
    fact = everything["fact"]
    assert fact["citation_accuracy"] == pytest.approx(3 / 7)  # pooled: (2+1) / (3+4)
    assert fact["citation_accuracy_per_task"]["mean"] == pytest.approx((2 / 3 + 1 / 4) / 2)
    assert fact["effective_citations"]["mean"] == pytest.approx(1.5)  # tasks that cite anything
    assert fact["tasks_without_citations"] == 1
    assert everything["research_seconds"]["mean"] == pytest.approx(20.0)
    assert summary["groups"]["en"]["race"]["relative"]["overall"]["mean"] == pytest.approx(0.45)
    assert summary["groups"]["zh"]["race"]["relative"]["overall"] == {
        "n": 1,
        "mean": 0.6,
        "sd": None,
    }
    assert everything["research_cost_usd"] is None  # unknown, not zero


def test_relative_and_absolute_scores_are_never_averaged_together():
    summary = summarize([result(1, "en", 0.4, 1, 0), result(2, "en", 7.0, 1, 0, "absolute")], 2)
    race = summary["groups"]["all"]["race"]
    assert race["relative"]["overall"]["mean"] == 0.4 and race["absolute"]["overall"]["mean"] == 7.0


def test_paired_difference_per_task():
    from deep_research.evaluation.compare import _figures

    a = [result(1, "en", 0.4, 1, 1), result(2, "zh", 0.5, 3, 1)]
    b = [result(1, "en", 0.5, 2, 0), result(2, "zh", 0.45, 1, 1)]
    rows = [
        (str(x.id), x.language, x.race.mode, _figures(x), _figures(y))
        for x, y in zip(a, b, strict=True)
    ]
    paired = Comparison(rows, []).paired()
    assert Comparison(rows, []).differences("overall") == pytest.approx([0.1, -0.05])
    overall = paired["relative"]["overall"]
    assert overall["mean"] == pytest.approx(0.025)
    assert overall["sd"] == pytest.approx(0.1060660, abs=1e-6)  # stdev of .1, -.05
    assert overall["b_better"] == 1 and overall["a_better"] == 1
    # citation accuracy: 1/2 -> 1 (+.5) and 3/4 -> 1/2 (-.25)
    assert paired["citation_accuracy"]["mean"] == pytest.approx(0.125)


def test_compare_keeps_relative_and_absolute_differences_apart():
    """+0.05 on a relative task and +3.0 on an absolute one are two rows, never one 1.525."""
    from deep_research.evaluation.compare import _figures, markdown

    a = [result(1, "en", 0.40, 1, 1), result(2, "en", 5.0, 1, 1, "absolute")]
    b = [result(1, "en", 0.45, 1, 1), result(2, "en", 8.0, 1, 1, "absolute")]
    rows = [
        (str(x.id), x.language, x.race.mode, _figures(x), _figures(y))
        for x, y in zip(a, b, strict=True)
    ]
    comparison = Comparison(rows, [])
    paired = comparison.paired()
    assert paired["relative"]["overall"]["mean"] == pytest.approx(0.05)
    assert paired["absolute"]["overall"]["mean"] == pytest.approx(3.0)
    assert "overall" not in paired  # no pooled row
    table = markdown(comparison, "a", "b")
    assert "| overall (relative) | 0-1 | 1 | +0.050 |" in table
    assert "| overall (absolute) | 0-10 | 1 | +3.000 |" in table
    assert "1.525" not in table


def test_compare_names_what_two_folders_disagree_on():
    from deep_research.evaluation.compare import mismatches

    base = {"judge": {"model": "j"}, "criteria": "c", "references": None, "mode": {"fact": "pages"}}
    assert mismatches(base, dict(base)) == []
    other = {**base, "judge": {"model": "k"}, "mode": {"fact": "snippets"}}
    found = mismatches(base, other)
    assert [line.split(":")[0] for line in found] == ["judge", "mode"]
    # the same criteria file under another name is the same criteria; other content is not
    named = {**base, "criteria": {"file": "a.jsonl", "sha256": "1" * 64}}
    assert mismatches(named, {**named, "criteria": {"file": "b.jsonl", "sha256": "1" * 64}}) == []
    changed = {**named, "criteria": {"file": "a.jsonl", "sha256": "2" * 64}}
    assert [line.split(":")[0] for line in mismatches(named, changed)] == ["criteria"]
