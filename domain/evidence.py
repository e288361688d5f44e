"""The run's evidence pool: every quote and snippet once, numbered for the weighing pass, and
what each section, review and gap analysis is shown of it. Pure, no I/O.

A read page's evidence is its verbatim quotes; a source no worker read is its excerpt (what the
search returned), in passages. The weighing pass (a model call) names items by number; here its
answer becomes run-wide quotes: a number that names no item is dropped, and a disagreement left
without two sources is none. Ranking other sources for a section is lexical (a cheap pre-filter);
whether one answers the section's question is the writer's call.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from deep_research.domain.language import script_of
from deep_research.domain.lexical import content_words, support_score
from deep_research.domain.markup import strip_markers
from deep_research.domain.sources import SourceRegistry
from deep_research.domain.statements import cited_statements
from deep_research.state import (
    Conflict,
    EvidenceWeighing,
    OutlineSection,
    Quote,
    SetAsideQuote,
    SourceEvidence,
    WeighedEvidence,
)

ITEM_CHARS = 1_200  # a source without quotes: its excerpt in items of about this many characters
MIN_RELEVANCE = 0.3  # share of a section's question a source must hold to be offered to it
MIN_USE = 0.5  # share of a cited statement an item must hold to count as used by it
MIN_OTHERS, MAX_OTHERS = 2, 6  # sources beyond its own a section is offered
NEARLY = 0.9  # share of a copied statement's words the report must hold to be its own
SAYS_NO_MORE = 0.8  # a claim whose words its quote holds this much is not shown beside it

Key = tuple[int, str]
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def key(quote: Quote) -> Key:
    """A piece of evidence's identity: its source and its words (whitespace aside)."""
    return quote.source_id, " ".join(quote.text.split())


def passages(text: str) -> list[str]:
    """A source's excerpt as items of at most about `ITEM_CHARS`: its lines, short ones joined,
    long ones split at sentence ends; nothing is cut."""
    pieces: list[str] = []
    for line in (line.strip() for line in text.splitlines()):
        if not line or line == "…":
            continue
        pieces += _SENTENCE_END.split(line) if len(line) > ITEM_CHARS else [line]
    items: list[str] = []
    for piece in pieces:
        if items and len(items[-1]) + len(piece) < ITEM_CHARS:
            items[-1] = f"{items[-1]} {piece}"
        else:
            items.append(piece)
    return items


def pool(registry: SourceRegistry) -> list[Quote]:
    """Every piece of evidence once, source by source: a read page's quotes, else the source's
    excerpt in passages."""
    quoted: dict[int, list[Quote]] = defaultdict(list)
    for quote in registry.quotes():
        quoted[quote.source_id].append(quote)
    items: dict[Key, Quote] = {}
    for source in registry.sources:
        own = quoted.get(source.id) or [
            Quote(source_id=source.id, text=text) for text in passages(source.excerpt)
        ]
        for quote in own:
            items.setdefault(key(quote), quote)
    return list(items.values())


def shown(item: Quote) -> str:
    """An item as a model is shown it: its words, then the claim the reading model said it
    supports when that claim says more than the words do (a table row's values are only
    figures; its claim names what each measures)."""
    claim = " ".join(item.claim.split())
    if not claim or support_score(claim, item.text) >= SAYS_NO_MORE:
        return item.text
    return f"{item.text}\n  ↳ {claim}"


def related_order(items: Sequence[Quote]) -> list[int]:
    """The items' indexes, each next one the remaining item sharing most content words with
    the one before (a greedy chain): when the pool must be weighed in several prompts, items
    about the same thing land in the same one. Lexical, a pre-filter: the model still decides
    what disagrees."""
    words = [content_words(shown(item)) for item in items]
    left = list(range(1, len(items)))
    order = [0] if items else []
    while left:
        last = words[order[-1]]
        best = max(left, key=lambda i: (len(last & words[i]) / (len(last | words[i]) or 1), -i))
        order.append(best)
        left.remove(best)
    return order


def by_source(items: Iterable[Quote]) -> dict[int, str]:
    """The evidence text of each source: its items, one a line."""
    texts: dict[int, list[str]] = defaultdict(list)
    for item in items:
        texts[item.source_id].append(item.text)
    return {source_id: "\n".join(lines) for source_id, lines in texts.items()}


def most_others(section: OutlineSection) -> int:
    """How many sources beyond its own a section is offered: as many as it has, at least
    `MIN_OTHERS`, at most `MAX_OTHERS` (each costs prompt tokens whether used or not)."""
    return max(MIN_OTHERS, min(MAX_OTHERS, len(section.source_ids)))


def resolved(answer: EvidenceWeighing, items: Sequence[Quote]) -> WeighedEvidence:
    """The weighing pass's answer in run-wide terms. Numbers that name no item are dropped; an
    item about another entity is no side of a disagreement; a disagreement left with fewer than
    two sources is dropped; a current figure not among its sides is unknown."""

    def item(number: int | None) -> Quote | None:
        return items[number - 1] if number is not None and 0 < number <= len(items) else None

    aside: dict[Key, SetAsideQuote] = {}
    for entry in answer.set_aside:
        if (quote := item(entry.item)) is not None:
            aside.setdefault(
                key(quote),
                SetAsideQuote(**asdict(quote), reason=entry.reason, note=entry.note),
            )
    elsewhere = {k for k, q in aside.items() if q.reason == "other_entity"}
    conflicts = []
    for found in answer.disagreements:
        sides: dict[Key, Quote] = {}
        for number in found.items:
            quote = item(number)
            if quote is not None and key(quote) not in elsewhere:
                sides.setdefault(key(quote), quote)
        if len({q.source_id for q in sides.values()}) < 2:
            continue
        current = item(found.current) if found.current in found.items else None
        current = current if current is not None and key(current) in sides else None
        why = found.why if current is not None or found.why else ""
        conflicts.append(
            Conflict(subject=found.subject, quotes=list(sides.values()), current=current, why=why)
        )
    return WeighedEvidence(conflicts=conflicts, set_aside=list(aside.values()))


def homes(sections: Sequence[OutlineSection], conflicts: Sequence[Conflict]) -> list[int]:
    """The section each disagreement is handed to, whole: the one that draws on most of its
    sources; on a tie, the one whose heading and question share most of its subject."""

    def fit(index: int, conflict: Conflict) -> tuple[int, float, int]:
        section = sections[index]
        shared = len({q.source_id for q in conflict.quotes} & set(section.source_ids))
        words = support_score(conflict.subject, f"{section.title} {section.question}")
        return shared, words, -index

    return [max(range(len(sections)), key=lambda i: fit(i, c)) for c in conflicts]


@dataclass(frozen=True)
class Shown:
    """A source as one section is shown it: its evidence less what is set aside or handed to
    another section."""

    source: SourceEvidence
    text: str


@dataclass(frozen=True)
class SectionEvidence:
    """What one section's writer gets: its own sources (the outline's, then its disagreements'),
    other sources that may bear on its question (best first), and the disagreements it states."""

    own: list[Shown]
    others: list[Shown]
    conflicts: list[Conflict]

    @property
    def sources(self) -> list[SourceEvidence]:
        """Every source the section may cite."""
        return [shown.source for shown in [*self.own, *self.others]]


class EvidenceDesk:
    """The pool and the weighing, to hand each section its evidence."""

    def __init__(self, registry: SourceRegistry, weighed: WeighedEvidence) -> None:
        self.registry = registry
        self.weighed = weighed
        self.items = pool(registry)
        self._by_source: dict[int, list[Quote]] = defaultdict(list)
        for item in self.items:
            self._by_source[item.source_id].append(item)
        self._aside = {key(q) for q in weighed.set_aside}
        self._claims: dict[int, list[str]] = defaultdict(list)
        for result in registry.results:
            for finding in result.findings:
                for source_id in finding.source_ids:
                    self._claims[source_id].append(finding.claim)

    def _shown(self, source_id: int, hidden: set[Key], keep: set[Key]) -> Shown | None:
        """A source with its visible items, or None when none is left."""
        if not 0 < source_id <= len(self.registry.sources):
            return None
        texts = [
            shown(q)
            for q in self._by_source.get(source_id, [])
            if key(q) in keep or key(q) not in hidden
        ]
        if not texts:
            return None
        return Shown(self.registry.sources[source_id - 1], "\n".join(texts))

    def for_section(
        self,
        index: int,
        sections: Sequence[OutlineSection],
        homes: Sequence[int],
        most_others: int,
        ids: Sequence[int] | None = None,
    ) -> SectionEvidence:
        """Section `index`'s evidence: its own sources (`ids`, by default the outline's), then
        up to `most_others` more from the whole pool whose text shares enough of its question
        (the writer decides what to use)."""
        part = sections[index]
        conflicts = self.weighed.conflicts
        mine = [c for c, home in zip(conflicts, homes, strict=True) if home == index]
        keep = {key(q) for c in mine for q in c.quotes}
        hidden = self._aside | {
            key(q)
            for c, home in zip(conflicts, homes, strict=True)
            if home != index
            for q in c.quotes
        }
        own_ids = part.source_ids if ids is None else ids
        sides = [q.source_id for c in mine for q in c.quotes]
        chosen = list(dict.fromkeys([*own_ids, *sides]))
        own = [shown for i in chosen if (shown := self._shown(i, hidden, keep))]
        query = f"{part.title} {part.question}"
        taken = {*chosen, *part.source_ids}
        ranked: list[tuple[float, int]] = []
        for source in self.registry.sources:
            if source.id in taken:
                continue
            text = "\n".join(q.text for q in self._by_source.get(source.id, []))
            score = max(
                support_score(query, text), support_score(query, " ".join(self._claims[source.id]))
            )
            if score >= MIN_RELEVANCE:
                ranked.append((score, source.id))
        ranked.sort(key=lambda pair: (-pair[0], pair[1]))
        others = [s for _, i in ranked if (s := self._shown(i, hidden, keep))][:most_others]
        return SectionEvidence(own, others, mine)

    def unused(self, report: str) -> list[Quote]:
        """The evidence `report` does not use and the weighing did not set aside: an item is
        used when a statement citing its source draws on it (in another script, the citation
        alone counts: words cannot tell)."""
        cited: dict[int, list[str]] = defaultdict(list)
        for statement in cited_statements(report):
            for source_id in statement.source_ids:
                cited[source_id].append(statement.text)
        return [
            item
            for item in self.items
            if key(item) not in self._aside and not _used(item, cited.get(item.source_id, []))
        ]


def _used(item: Quote, statements: Iterable[str]) -> bool:
    """True when one of the statements citing the item's source draws on it."""
    script = script_of(item.text)
    return any(
        script_of(text) != script or support_score(text, item.text) >= MIN_USE
        for text in statements
    )


UNUSED_SHOWN = 40  # unused items a review is shown at most


def shown_unused(items: Sequence[Quote], cited: set[int]) -> list[Quote]:
    """The unused evidence a review is shown: first the items of sources the report does not
    cite at all, then the rest, at most `UNUSED_SHOWN`."""
    return sorted(items, key=lambda q: q.source_id in cited)[:UNUSED_SHOWN]


def in_report(statements: Iterable[str], report: str) -> list[str]:
    """The statements (a reviewer copied them) found in `report`, whitespace and citations
    aside, or nearly so; the others resolve to nothing and are dropped."""
    text = " ".join(strip_markers(report).split())
    found = []
    for statement in statements:
        wanted = " ".join(strip_markers(statement).split())
        if wanted and (wanted in text or support_score(wanted, text) >= NEARLY):
            found.append(statement)
    return list(dict.fromkeys(found))
