"""A finished report's claims, as the change list between two versions compares them.

A claim is a cited statement of the report (a sentence, list item or table row) with the
sources it cites, by the number the report gives them and their address. Two versions' claims
that read the same (case and spacing aside) are the same claim without asking anyone; anything
else is compared by the model. A figure the model says changed must be written in its claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from deep_research.domain.statements import cited_statements
from deep_research.state import CitedClaim, Source

_NOT_IN_FIGURES = re.compile(r"[\s,\u00a0\u2009\u202f'’_]")  # spaces and digit group marks


def report_claims(report: str, sources: list[Source]) -> list[CitedClaim]:
    """The report's cited statements, each once, with the sources it cites (number, address)."""
    urls = {source.number: source.url for source in sources if source.number}
    claims: dict[str, CitedClaim] = {}
    for statement in cited_statements(report):
        cited = [(n, urls[n]) for n in statement.source_ids if n in urls]
        if cited and same_key(statement.text) not in claims:
            claims[same_key(statement.text)] = CitedClaim(claim=statement.text, sources=cited)
    return list(claims.values())


def same_key(claim: str) -> str:
    """What two claims that read the same share: their words, case and spacing aside."""
    return " ".join(claim.casefold().split()).rstrip(".。")


def figure_in(value: str, claim: str) -> bool:
    """True when the claim writes the figure (spaces and digit group marks aside: 7,350 is
    7350 is 7 350)."""
    wanted = _NOT_IN_FIGURES.sub("", value.casefold())
    return bool(wanted) and wanted in _NOT_IN_FIGURES.sub("", claim.casefold())


@dataclass(frozen=True)
class CitedPair:
    """One cited claim: a statement, the number of one source it cites, the quote it rests on
    ("" when the run kept none: its citations were not checked)."""

    statement: str
    number: int
    quote: str


def cited_pairs(values: dict[str, Any]) -> list[CitedPair]:
    """A finished run's cited claims, each statement and source once, in report order: its
    kept citation checks (with their quotes); or, when the run checked none, the report's cited
    statements."""
    numbers = {source.id: source.number for source in values.get("sources") or [] if source.number}
    pairs: dict[tuple[str, int], CitedPair] = {}
    for check in values.get("citations") or []:
        if check.verdict != "unsupported" and check.source_id in numbers:
            number = numbers[check.source_id]
            pairs.setdefault(
                (check.statement, number), CitedPair(check.statement, number, check.evidence)
            )
    if not pairs:
        cited = set(numbers.values())
        for statement in cited_statements(values.get("report") or ""):
            for number in statement.source_ids:
                if number in cited:
                    pairs.setdefault(
                        (statement.text, number), CitedPair(statement.text, number, "")
                    )
    return list(pairs.values())
