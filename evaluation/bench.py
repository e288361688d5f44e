"""Benchmark mode (`--bench-dir`): DeepResearch Bench's own tasks, criteria, references and
prompts, read from a local clone of its repository at run time (never copied here).

It scores as the benchmark's code does (`deepresearch_bench_race.py`,
`utils/score_calculator.py`): tasks, criteria and references are matched by prompt text; the
report is cleaned by the judge with the benchmark's cleaning prompt; one user message (no system
message) holds its merged score prompt with the criteria as JSON; the judge's JSON reply names
each criterion by its text, matched to the criteria exactly, then case-insensitively, then as a
substring, else given the dimension's mean weight; the reference's per-dimension average is kept
only when the dimension's last scored item had a reference score; a dimension or total whose
two sides sum to zero scores 0.

The prompt files are Python modules; their string constants are read with `ast`, never run.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from deep_research.domain.context import clip, estimate_tokens, reply_reserve
from deep_research.domain.json_reply import ReplyNotJSON, extract_json, strip_reasoning
from deep_research.evaluation.contracts import DIMENSIONS, Dimension
from deep_research.evaluation.judge import Judge, JudgeFailed
from deep_research.evaluation.records import RaceScore, ScoredCriterion, TaskCriteria
from deep_research.evaluation.tasks import EvalTask, TaskFileError, load_tasks
from deep_research.state import Usage

QUERY = "data/prompt_data/query.jsonl"
CRITERIA = "data/criteria_data/criteria.jsonl"
REFERENCE = "data/test_data/cleaned_data/reference.jsonl"
CLEANED = "data/test_data/cleaned_data"
SCORE_PROMPTS = {"en": "prompt/score_prompt_en.py", "zh": "prompt/score_prompt_zh.py"}
SCORE_PROMPT = "generate_merged_score_prompt"
CLEAN_PROMPTS = "prompt/clean_prompt.py"
CLEAN_PROMPT = {"en": "clean_article_prompt_en", "zh": "clean_article_prompt_zh"}
PUBLISHED = "results/race/{system}/race_result.txt"
FACT_PROMPTS = ("utils/extract.py", "utils/deduplicate.py", "utils/validate.py")
MIN_CLEANED_CHARS = 100  # the benchmark's ArticleCleaner.min_valid_length
REPLY_ASKS = 3  # the benchmark asks up to 10 times; each of ours already retries server faults


def prompt_constant(path: Path, name: str) -> str:
    """The string assigned to `name` at the top level of a Python file, read without running it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise TaskFileError(f"cannot read {path}: {error}") from None
    except (MemoryError, RecursionError):  # CPython's parser on an expression nested 10^5 deep
        raise TaskFileError(f"cannot read {path}: nested too deep to parse") from None
    for node in tree.body:
        named = isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        )
        if named and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
    raise TaskFileError(f"{path} assigns no string {name}")


def _rows(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file (the benchmark's data files)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise TaskFileError(f"cannot read {path}: {error}") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise TaskFileError(f"{path} line {number}: not JSON ({error.msg})") from None
            except RecursionError:
                raise TaskFileError(f"{path} line {number}: JSON nested too deep") from None
    return rows


@dataclass(frozen=True)
class BenchDir:
    """A local clone of the benchmark's repository: where its files are, checked up front."""

    root: Path

    def __post_init__(self) -> None:
        wanted = [QUERY, CRITERIA, REFERENCE, *SCORE_PROMPTS.values(), CLEAN_PROMPTS, *FACT_PROMPTS]
        missing = [name for name in wanted if not (self.root / name).is_file()]
        if missing:
            raise TaskFileError(
                f"--bench-dir {self.root} is not a DeepResearch Bench clone: no {missing[0]}"
            )

    def tasks(self) -> list[EvalTask]:
        """The benchmark's tasks (`query.jsonl`)."""
        return load_tasks(self.root / QUERY)

    def criteria(self) -> dict[str, TaskCriteria]:
        """The benchmark's criteria, by task prompt (it matches them by prompt text)."""
        found = {}
        for row in _rows(self.root / CRITERIA):
            try:
                found[row["prompt"]] = TaskCriteria.model_validate(row)
            except (KeyError, ValueError) as error:
                raise TaskFileError(f"{self.root / CRITERIA}: {error}") from None
        return found

    def references(self) -> dict[str, str]:
        """The benchmark's (cleaned) reference articles, by task prompt."""
        return {r["prompt"]: r.get("article", "") for r in _rows(self.root / REFERENCE)}

    def with_references(self, tasks: list[EvalTask]) -> list[EvalTask]:
        """The tasks, each with the benchmark's reference for its prompt text."""
        references = self.references()
        return [
            t.model_copy(update={"reference": references[t.prompt]})
            if t.prompt in references
            else t
            for t in tasks
        ]

    def check_prompts(self) -> None:
        """Read every prompt the eval will use (scoring, cleaning, FACT, both languages) now,
        so that an unreadable one is said before any call, not after the first task's run."""
        from deep_research.evaluation.bench_fact import BenchFact

        self.scorer(clean=True)
        for language in ("en", "zh"):
            BenchFact.from_clone(self.root, language)

    def scorer(self, clean: bool) -> BenchScorer:
        """The benchmark's scoring, with its prompts as this clone has them."""
        return BenchScorer(
            score={
                lang: prompt_constant(self.root / path, SCORE_PROMPT)
                for lang, path in SCORE_PROMPTS.items()
            },
            clean={
                lang: prompt_constant(self.root / CLEAN_PROMPTS, name)
                for lang, name in CLEAN_PROMPT.items()
            }
            if clean
            else None,
        )

    def published(self, system: str) -> dict[str, float] | None:
        """The benchmark's own published RACE figures for one system, when the clone ships them."""
        path = self.root / PUBLISHED.format(system=system)
        if not path.is_file():
            return None
        figures = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            name, _, value = line.partition(":")
            try:
                figures[name.strip()] = float(value)
            except ValueError:
                continue
        return figures


def criteria_json(criteria: TaskCriteria) -> str:
    """The criteria as the benchmark shows them to the judge: JSON, text and explanation only."""
    shown = {
        dimension: [{"criterion": c.criterion, "explanation": c.explanation} for c in items]
        for dimension, items in criteria.criterions.items()
    }
    return json.dumps(shown, ensure_ascii=False, indent=2)


def _weight_of(text: str, weights: dict[str, float]) -> float | None:
    """A criterion's weight by its text: exact, then case-insensitive, then as a substring."""
    if text in weights:
        return weights[text]
    lower = text.lower()
    for key, weight in weights.items():
        if key.lower() == lower:
            return weight
    for key, weight in weights.items():
        if lower in key.lower() or key.lower() in lower:
            return weight
    return None


def _score(value: Any) -> float | None:
    """A score as the benchmark reads it: float() of whatever the judge wrote, None if it fails."""
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def weighted_scores(reply: dict[str, Any], criteria: TaskCriteria) -> RaceScore:
    """The benchmark's arithmetic on a judge reply (`calculate_weighted_scores` and the overall
    and per-dimension shares of `process_single_item`)."""
    weights = {d: {c.criterion: c.weight for c in cs} for d, cs in criteria.criterions.items()}
    target: dict[Dimension, float] = {}
    reference: dict[Dimension, float] = {}
    scored: list[ScoredCriterion] = []
    for dimension, items in reply.items():
        if not isinstance(items, list) or dimension not in criteria.dimension_weight:
            continue
        table = weights.get(dimension) or {}
        if not table:
            continue
        target_sum = reference_sum = total_weight = 0.0
        last_reference: float | None = None
        for item in items:
            if not isinstance(item, dict):
                continue
            text = item.get("criterion")
            text = text.strip() if isinstance(text, str) else None
            raw_1, raw_2 = item.get("article_1_score"), item.get("article_2_score")
            if raw_1 is None and item.get("target_score") is not None:
                raw_1 = item.get("target_score")
            first, second = _score(raw_1), _score(raw_2)
            if (raw_1 is not None and first is None) or (raw_2 is not None and second is None):
                continue  # the benchmark skips a criterion whose score is not a number
            last_reference = second
            if not text or first is None:
                continue
            weight = _weight_of(text, table)
            if weight is None:
                weight = sum(table.values()) / len(table)
            target_sum += first * weight
            total_weight += weight
            if second is not None:
                reference_sum += second * weight
            scored.append(
                ScoredCriterion(
                    dimension=dimension,
                    criterion=text,
                    weight=weight,
                    target_score=first,
                    reference_score=second,
                    analysis=str(item.get("analysis") or ""),
                )
            )
        if total_weight > 0:
            target[dimension] = target_sum / total_weight
            reference[dimension] = (
                reference_sum / total_weight if last_reference is not None else 0.0
            )
        else:
            target[dimension] = reference[dimension] = 0.0
    target_total = sum(target[d] * criteria.dimension_weight.get(d, 0) for d in target)
    reference_total = sum(reference[d] * criteria.dimension_weight.get(d, 0) for d in reference)

    def share(a: float, b: float) -> float:
        return a / (a + b) if a + b > 0 else 0.0

    return RaceScore(
        mode="relative",
        dimensions={d: share(target[d], reference[d]) if d in target else 0.0 for d in DIMENSIONS},
        overall=share(target_total, reference_total),
        target={d: target.get(d, 0.0) for d in DIMENSIONS},
        target_total=target_total,
        reference={d: reference.get(d, 0.0) for d in DIMENSIONS},
        reference_total=reference_total,
        criteria=scored,
    )


def _reply_json(text: str) -> dict[str, Any]:
    """The judge's JSON reply with all four dimensions, or ValueError (the benchmark's check)."""
    try:
        value = extract_json(strip_reasoning(text))
    except ReplyNotJSON as error:
        raise ValueError(f"no JSON in the reply: {error}") from None
    if not isinstance(value, dict):
        raise ValueError("the reply is not a JSON object")
    missing = [d for d in DIMENSIONS if d not in value]
    if missing:
        raise ValueError(f"missing expected dimensions: {missing}")
    return value


@dataclass(frozen=True)
class BenchScorer:
    """Scores a report with the benchmark's prompts (a `pipeline.RaceScorer`)."""

    score: dict[str, str]  # language -> merged score prompt
    clean: dict[str, str] | None  # language -> cleaning prompt; None: articles are clean already

    def score_messages(
        self, task: EvalTask, article: str, reference: str, criteria: TaskCriteria, limit: int
    ) -> tuple[list[BaseMessage], bool]:
        """The one user message the benchmark sends; both articles cut (and said so) only when
        the prompt would not fit the judge's context window."""
        template = self.score[_language(task)]
        fields = {"task_prompt": task.prompt, "criteria_list": criteria_json(criteria)}
        text = template.format(**fields, article_1=article, article_2=reference)
        room = limit - reply_reserve(limit)
        if estimate_tokens(text) <= room:
            return [HumanMessage(text)], False
        fixed = estimate_tokens(template.format(**fields, article_1="", article_2=""))
        each = max(0, (room - fixed) // 2)
        shorter = template.format(
            **fields, article_1=clip(article, each), article_2=clip(reference, each)
        )
        return [HumanMessage(shorter)], True

    async def cleaned(
        self, task: EvalTask, report: str, judge: Judge, usage: list[Usage]
    ) -> tuple[str, bool]:
        """The report as the benchmark's cleaning prompt has the judge rewrite it, and whether it
        had to be cut to fit the judge's context first (the benchmark splits it in two)."""
        if self.clean is None:
            return report, False
        template = self.clean[_language(task)]
        room = judge.context_tokens - reply_reserve(judge.context_tokens)
        article, clipped = report, estimate_tokens(template.format(article=report)) > room
        if clipped:
            article = clip(report, max(0, room - estimate_tokens(template.format(article=""))))
        prompt = template.format(article=article)
        for _ in range(REPLY_ASKS):
            text = strip_reasoning(await judge.write([HumanMessage(prompt)], usage))
            if len(text.strip()) >= MIN_CLEANED_CHARS:
                return text, clipped
        raise JudgeFailed(f"the judge's cleaned article stayed under {MIN_CLEANED_CHARS} chars")

    async def __call__(
        self, task: EvalTask, report: str, criteria: TaskCriteria, judge: Judge, usage: list[Usage]
    ) -> RaceScore:
        """Clean, ask with the benchmark's score prompt, re-ask on a reply it would refuse."""
        if not task.reference:
            raise JudgeFailed(f"the benchmark has no reference article for task {task.id}")
        article, cut = await self.cleaned(task, report, judge, usage)
        messages, clipped = self.score_messages(
            task, article, task.reference, criteria, judge.context_tokens
        )
        problem = ""
        for _ in range(REPLY_ASKS):
            try:
                reply = _reply_json(await judge.write(messages, usage))
            except ValueError as error:
                problem = str(error)
                continue
            scored = weighted_scores(reply, criteria)
            return scored.model_copy(update={"clipped": clipped or cut})
        raise JudgeFailed(f"the judge gave no usable score reply: {problem}")


def _language(task: EvalTask) -> str:
    """The benchmark's prompt language for a task: zh for Chinese, en for everything else."""
    return "zh" if task.language == "zh" else "en"
