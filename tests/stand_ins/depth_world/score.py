"""What a report did with the planted facts, judged from its text and its source list.

The report's body (before its list of sources) is cut into units: each table row and list item
is one, and each sentence of a paragraph is one (a sentence ends at . ! ? or 。！？, with the
citation markers that follow it). A unit cites the pages its markers number in the source list.

- A fact is **found** when a unit states its figure and cites the page that holds it.
- A disagreement is **stated** when one unit, or two consecutive units of one paragraph, give
  both figures, each followed by a citation of its own page, with a word that says they
  differ (`DIFFER`).
- A stale figure is **presented as current** when a unit states it without the newer figure
  and without a word or year that puts it in the past (`PAST`, or a year before the newer
  page's).
- A near namesake's figure is **leaked** when a unit states it without naming the namesake.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from stand_ins.depth_world.facts import Fact, figure_pattern

DIFFER = (
    "disagree", "differ", "conflict", "contradict", "inconsistent", "discrepan", "whereas",
    "in contrast", "however", "while ", " but ", "versus", "against", "不一致", "分歧", "矛盾",
    "而", "但", "相比",
)  # fmt: skip
PAST = (
    "earlier", "previous", "former", "older", "old ", "superseded", "outdated", "out of date",
    "no longer", "replaced", "until", "dates from", "此前", "以前", "旧", "早先", "过时", "已被",
    "较早",
)  # fmt: skip
_MARKER = re.compile(r"\[(\d+)\]")
_END = re.compile(r"[。！？](?:\s*\[\d+\])*|[.!?](?:\s*\[\d+\])*(?=\s|$)")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)]|\|)")


@dataclass(frozen=True)
class Unit:
    """A sentence, list item or table row of the report: its text, the paths it cites, and
    the paragraph it belongs to."""

    text: str
    cites: frozenset[str]
    paragraph: int

    @property
    def plain(self) -> str:
        return _MARKER.sub("", self.text)


def body_of(report: str) -> str:
    """The report without its closing list of sources (the last level-2 heading whose lines
    are numbered links)."""
    parts = re.split(r"\n(?=## )", report)
    listed = re.search(r"^\s*(?:[-*] )?(?:\d+\.|\[\d+\])\s", parts[-1], re.M)
    if len(parts) > 1 and listed and re.search(r"https?://", parts[-1]):
        return "\n".join(parts[:-1])
    return report


def _sentences(text: str) -> list[str]:
    found, start = [], 0
    for match in _END.finditer(text):
        found.append(text[start : match.end()].strip())
        start = match.end()
    if text[start:].strip():
        found.append(text[start:].strip())
    return [s for s in found if s]


def units(report: str, paths: dict[int, str]) -> list[Unit]:
    """The report's units; `paths` maps a cited number to the path of its page."""
    found: list[Unit] = []
    for number, paragraph in enumerate(re.split(r"\n\s*\n", body_of(report))):
        lines = paragraph.strip().splitlines()
        if not lines or lines[0].startswith("#"):
            lines = lines[1:]
        prose: list[str] = []
        pieces: list[str] = []
        for line in lines:
            if _ITEM.match(line):
                pieces += [*_sentences(" ".join(prose)), line.strip()]
                prose = []
            else:
                prose.append(line.strip())
        pieces += _sentences(" ".join(prose))
        for piece in pieces:
            cites = frozenset(paths[int(n)] for n in _MARKER.findall(piece) if int(n) in paths)
            found.append(Unit(piece, cites, number))
    return found


def cited_paths(sources: list) -> dict[int, str]:
    """A report's source list (`Source` objects with `number` and `url`) as number -> path."""
    return {s.number: urlsplit(s.url).path for s in sources if s.number is not None}


def found(fact: Fact, report_units: list[Unit]) -> bool:
    """The fact's figure stated in a unit that cites the page that holds it."""
    pattern = figure_pattern(fact.token)
    return any(fact.path in u.cites and pattern.search(u.plain) for u in report_units)


def _cited_after(fact: Fact, unit: Unit, paths: dict[int, str]) -> bool:
    """The figure stands in the unit and the first citation markers after it (the unit's, if
    none follows) cite the fact's page: in "A 71.4 [1], B 83.9 [2]" 71.4 cites [1] only."""
    match = figure_pattern(fact.token).search(unit.text)
    if match is None:
        return False
    after = re.match(r"[^\[]*((?:\s*\[\d+\])+)", unit.text[match.end() :])
    if after is None:
        return fact.path in unit.cites
    return fact.path in {paths.get(int(n)) for n in _MARKER.findall(after.group(1))}


def stated_disagreement(a: Fact, b: Fact, report_units: list[Unit], paths: dict[int, str]) -> bool:
    """Both figures in one unit or two consecutive units of a paragraph, each followed by a
    citation of its own page, with a word saying they differ."""
    for n, unit in enumerate(report_units):
        span = [unit]
        if n + 1 < len(report_units) and report_units[n + 1].paragraph == unit.paragraph:
            span.append(report_units[n + 1])
        has_a = any(_cited_after(a, u, paths) for u in span)
        has_b = any(_cited_after(b, u, paths) for u in span)
        text = " ".join(u.plain.lower() for u in span)
        if has_a and has_b and any(word in text for word in DIFFER):
            return True
    return False


def presented_as_current(stale: Fact, current: Fact, year: int, report_units: list[Unit]) -> bool:
    """A unit states the stale figure as if it held now (see the module's rule)."""
    old, new = figure_pattern(stale.token), figure_pattern(current.token)
    for unit in report_units:
        text = unit.plain
        if not old.search(text) or new.search(text):
            continue
        lowered = f" {text.lower()} "
        dated = any(int(y) < year for y in re.findall(r"(?<!\d)(?:19|20)\d\d(?!\d)", text))
        if not dated and not any(word in lowered for word in PAST):
            return True
    return False


def leaked(fact: Fact, report_units: list[Unit]) -> bool:
    """A near namesake's figure stated without naming the namesake."""
    pattern = figure_pattern(fact.token)
    name = fact.subject  # for a near miss, the namesake's own name
    return any(pattern.search(u.plain) and name not in u.plain for u in report_units)
