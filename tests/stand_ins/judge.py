"""A stand-in judge: scripted, known answers to every contract `deep-research eval` asks for.

Served by the same `ChatServer` as the research stand-in (any structured-output method), on
its own port, so the tests can tell judge calls from research calls. It also answers the
prose prompts of benchmark mode as laid out in `tests/fixtures/bench` (made-up wording):
cleaning (`FIXTURE CLEAN`), merged scoring (criteria JSON between `CRITERIA:` and
`END CRITERIA`, each criterion named by its text as the benchmark's judge does), and FACT's
extraction, deduplication and validation (`FIXTURE EXTRACT`, `FIXTURE DEDUP`, `FIXTURE VALIDATE`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from stand_ins.chat import ChatCall

WEIGHTS = {
    "comprehensiveness": 0.4,
    "insight": 0.3,
    "instruction_following": 0.2,
    "readability": 0.1,
}
CRITERIA_WEIGHTS = {
    "comprehensiveness": [0.75, 0.25],
    "insight": [0.5, 0.5],
    "instruction_following": [1.0],
    "readability": [0.6, 0.4],
}
_CRITERION_LINE = re.compile(r"^  (\d+)\. ", re.MULTILINE)
_LINK = re.compile(r"\[[^\]]*\]\((https?://[^)\s]+)\)")


def target_score(n: int) -> float:
    """Criterion n's score: n for 1..8, then round again (1..8), so any count stays in 0-10."""
    return float((n - 1) % 8 + 1)


_NUMBERED = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


def _section(text: str, after: str) -> str:
    """The first <data> section after a heading."""
    match = re.search(re.escape(after) + r"\s*<data>\n(.*?)\n</data>", text, re.S)
    return match.group(1) if match else ""


@dataclass
class JudgeBrain:
    """Known answers: criterion n scores n (reference 8 - n); facts hold when numbers match."""

    drop_first_scores: bool = False  # the first scores reply leaves a criterion out
    criteria_per_dimension: int | None = None  # n equal-weight criteria instead of the fixed ones
    calls: Counter = field(default_factory=Counter)
    seen: list[ChatCall] = field(default_factory=list)

    def answer(self, call: ChatCall) -> Any:
        self.calls[call.contract or "prose"] += 1
        self.seen.append(call)
        return getattr(self, f"on_{call.contract or 'prose'}")(call)

    def on_DimensionWeights(self, call: ChatCall) -> dict:
        return {"analysis": "scripted", **WEIGHTS}

    def on_DimensionCriteria(self, call: ChatCall) -> dict:
        dimension = re.search(r"criteria for judging its (\w+):", call.user).group(1)
        weights = CRITERIA_WEIGHTS[dimension]
        if self.criteria_per_dimension:
            weights = [1 / self.criteria_per_dimension] * self.criteria_per_dimension
        criteria = [
            {"criterion": f"{dimension} {n}", "explanation": f"check {n}", "weight": weight}
            for n, weight in enumerate(weights, 1)
        ]
        return {"criteria": criteria}

    def on_CriterionScores(self, call: ChatCall) -> dict:
        numbers = [int(n) for n in _CRITERION_LINE.findall(call.user.split("<report>")[0])]
        comparative = "<reference>" in call.user
        scores = [
            {
                "criterion": n,
                "analysis": f"criterion {n}",
                "target_score": target_score(n),
                **({"reference_score": 8.0 - target_score(n)} if comparative else {}),
            }
            for n in numbers
        ]
        if self.drop_first_scores and self.calls["CriterionScores"] == 1:
            scores = scores[:-1]
        return {"scores": scores}

    def on_DistinctStatements(self, call: ChatCall) -> dict:
        statements = _NUMBERED.findall(_section(call.user, ""))
        return {"keep": [int(n) for n, text in statements if "(again)" not in text]}

    def on_FactJudgments(self, call: ChatCall) -> dict:
        statements = _NUMBERED.findall(_section(call.user, "Statements:"))
        page = _section(call.user, "Page:")
        page_numbers = set(re.findall(r"\d+", page))
        judgments = []
        for n, text in statements:
            numbers = set(re.findall(r"\d+", text))
            if "not found" in page.casefold():
                result = "unknown"
            elif numbers and numbers <= page_numbers:
                result = "supported"
            else:
                result = "unsupported"
            judgments.append({"statement": int(n), "result": result, "reason": "scripted"})
        return {"judgments": judgments}

    def on_CitedFacts(self, call: ChatCall) -> dict:
        """Every line of the report with a Markdown link: the line (link removed) and its URL."""
        report = _section(call.user, "Report:")
        facts = []
        for line in report.splitlines():
            for url in _LINK.findall(line):
                fact = _LINK.sub("", line).strip(" -.")
                facts.append({"fact": fact, "url": url})
        return {"facts": facts}

    def on_prose(self, call: ChatCall) -> str:
        """Benchmark mode: clean an article, or score two on criteria named by their text."""
        if "FIXTURE EXTRACT" in call.user:
            report = call.user.split(":", 1)[1]
            triplets = [
                {"fact": _LINK.sub("", line).strip(" -."), "ref_idx": "0", "url": url}
                for line in report.splitlines()
                for url in _LINK.findall(line)
            ]
            return "```json\n" + json.dumps(triplets, ensure_ascii=False) + "\n```"
        if "FIXTURE DEDUP" in call.user:
            numbered = _NUMBERED.findall(call.user)
            return json.dumps([int(n) for n, text in numbered if "(again)" not in text])
        if "FIXTURE VALIDATE" in call.user:
            page = call.user.split("<reference>\n", 1)[1].split("\n</reference>", 1)[0]
            listed = call.user.split("<statements>\n", 1)[1].split("\n</statements>", 1)[0]
            page_numbers = set(re.findall(r"\d+", page))
            verdicts = []
            for n, text in _NUMBERED.findall(listed):
                numbers = set(re.findall(r"\d+", text))
                result = "supported" if numbers and numbers <= page_numbers else "unsupported"
                verdicts.append({"idx": int(n), "result": result})
            return json.dumps(verdicts)
        if "FIXTURE CLEAN" in call.user:
            article = call.user.split("FIXTURE CLEAN:", 1)[1]
            return "CLEANED " + re.sub(r"\[\d+\]", "", article).strip()
        shown = call.user.split("CRITERIA:", 1)[1].split("END CRITERIA", 1)[0]
        criteria = json.loads(shown)
        reply, n = {}, 0
        for dimension, items in criteria.items():
            reply[dimension] = []
            for item in items:
                n += 1
                reply[dimension].append(
                    {
                        "criterion": item["criterion"],
                        "analysis": f"criterion {n}",
                        "article_1_score": target_score(n),
                        "article_2_score": 8.0 - target_score(n),
                    }
                )
        return "Here is my evaluation.\n```json\n" + json.dumps(reply, ensure_ascii=False) + "\n```"
