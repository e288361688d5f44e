"""FACT with DeepResearch Bench's own prompts (`--bench-dir`), read from the clone at run time.

Its `utils/extract.py`, `utils/deduplicate.py` and `utils/validate.py` each hold a Chinese
(`prompt_template`) and an English (`prompt_template_en`) prompt; they are read with `ast`, never
run. As its code does: extraction returns a JSON list of `{fact, ref_idx, url}`; the statements
citing one URL are numbered and deduplicated by a JSON list of the numbers to keep (a reply that
cannot be used keeps them all); a page's verdicts are a JSON list of `{idx, result}`, one per
statement, asked up to three times, else the URL counts in no figure (here: `unknown`).
Our own reports keep their `[n]` structure as the source of pairs (`evaluation.fact`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from deep_research.domain.context import clip, estimate_tokens, reply_reserve
from deep_research.domain.json_reply import ReplyNotJSON, extract_json, strip_reasoning
from deep_research.evaluation.bench import prompt_constant
from deep_research.evaluation.contracts import FactJudgment
from deep_research.evaluation.fact import Pair
from deep_research.evaluation.judge import Judge, JudgeFailed
from deep_research.state import Usage

FILES = {"extract": "utils/extract.py", "dedup": "utils/deduplicate.py"}
FILES["validate"] = "utils/validate.py"
NAMES = {"zh": "prompt_template", "en": "prompt_template_en"}
ASKS = 3  # as the benchmark's extraction, deduplication and validation loops
RESULTS = ("supported", "unsupported", "unknown")
NO_VERDICTS = "the judge gave no usable verdicts (the benchmark leaves such a URL out)"


def _json_list(text: str) -> list[Any]:
    """The JSON list a reply holds, read as the benchmark reads it (code fences dropped, the
    rest parsed), else found in the text; or ValueError."""
    body = strip_reasoning(text)
    try:
        value = json.loads(body.replace("```json", "").replace("```", ""))
    except json.JSONDecodeError:
        try:
            value = extract_json(body)
        except ReplyNotJSON as error:
            raise ValueError(str(error)) from None
    if not isinstance(value, list):
        raise ValueError("the reply is not a JSON list")
    return value


@dataclass(frozen=True)
class BenchFact:
    """The benchmark's three FACT prompts in one language (a `fact.FactAsker`)."""

    extract_prompt: str
    dedup_prompt: str
    validate_prompt: str

    @classmethod
    def from_clone(cls, root: Path, language: str) -> BenchFact:
        """The prompts of a clone for a task's language (zh for Chinese, en otherwise)."""
        name = NAMES["zh" if language == "zh" else "en"]
        return cls(
            *(prompt_constant(root / FILES[k], name) for k in ("extract", "dedup", "validate"))
        )

    async def _once(self, prompt: str, judge: Judge, usage: list[Usage]) -> list[Any] | None:
        """The judge's JSON list for one prompt (one user message, as the benchmark sends)."""
        try:
            return _json_list(await judge.write([HumanMessage(prompt)], usage))
        except ValueError:
            return None

    async def _reply(self, prompt: str, judge: Judge, usage: list[Usage]) -> list[Any] | None:
        """The judge's JSON list for one prompt, asked up to `ASKS` times; None if never."""
        for _ in range(ASKS):
            reply = await self._once(prompt, judge, usage)
            if reply is not None:
                return reply
        return None

    async def extract(self, report: str, judge: Judge, usage: list[Usage]) -> list[Pair]:
        """The report's (fact, url) triplets as the benchmark's extraction prompt gets them."""
        reply = await self._reply(self.extract_prompt.format(report_text=report), judge, usage)
        if reply is None:
            raise JudgeFailed("the judge gave no usable citation list")
        return [
            Pair(str(item["fact"]), 0, str(item["url"]))
            for item in reply
            if isinstance(item, dict)
            and str(item.get("fact") or "").strip()
            and str(item.get("url") or "").startswith(("http://", "https://"))
        ]

    async def distinct(self, group: list[Pair], judge: Judge, usage: list[Usage]) -> list[Pair]:
        """The statements citing one URL that the benchmark's prompt keeps."""
        statements = "\n".join(f"{n}. {p.statement}" for n, p in enumerate(group, 1))
        keep = await self._reply(self.dedup_prompt.format(statements=statements), judge, usage)
        if not keep or len(keep) > len(group):
            return group  # as the benchmark: an unusable reply keeps every statement
        if not all(isinstance(n, int) and 1 <= n <= len(group) for n in keep):
            return group
        return [group[n - 1] for n in keep]

    async def verdicts(
        self, group: list[Pair], page: str, judge: Judge, usage: list[Usage]
    ) -> list[FactJudgment]:
        """One verdict per statement, from the page, with the benchmark's validation prompt."""
        statements = "\n".join(f"{n}. {p.statement}" for n, p in enumerate(group, 1))
        fixed = self.validate_prompt.format(reference="", statements=statements)
        room = judge.context_tokens - reply_reserve(judge.context_tokens) - estimate_tokens(fixed)
        prompt = self.validate_prompt.format(
            reference=clip(page, max(0, room)), statements=statements
        )
        for _ in range(ASKS):
            reply = await self._once(prompt, judge, usage)
            by_number = {
                item.get("idx"): item.get("result")
                for item in reply or []
                if isinstance(item, dict) and item.get("result") in RESULTS
            }
            numbers = set(range(1, len(group) + 1))
            if reply is not None and len(reply) == len(group) and set(by_number) == numbers:
                return [FactJudgment(statement=n, result=by_number[n]) for n in sorted(numbers)]
        return [
            FactJudgment(statement=n, result="unknown", reason=NO_VERDICTS)
            for n in range(1, len(group) + 1)
        ]
