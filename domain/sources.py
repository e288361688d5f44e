"""The source registry: every URL a search returned, once, with a stable integer id.

Workers number their own sources (1..n) while they research in parallel; the registry gives
them run-wide ids in a fixed order (round, then subtask id, then each worker's first-seen
order), so ids never depend on which worker finished first and stay the same on resume.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from deep_research.domain.control_chars import without_any_controls, without_controls
from deep_research.state import Finding, Quote, SearchHit, SourceEvidence, WorkerResult

MAX_EXCERPT_CHARS = 4000  # evidence kept per source when several searches returned it


def parses(url: str) -> bool:
    """True when `url` can be taken apart as an address (`http://[::1` cannot: its host is
    an unclosed IPv6 literal)."""
    try:
        urlsplit(url.strip())
    except ValueError:
        return False
    return True


def normalize_url(url: str) -> str:
    """The identity of a URL: scheme and host lower-cased, no trailing slash, fragment kept.

    An address that does not parse is its own text (it is never a source: `parses` keeps such a
    hit out at the door; a report or an article may still write one).
    """
    if not parses(url):
        return url.strip()
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/") or ""
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), path, parts.query, parts.fragment)
    )


def admitted(hits: list[SearchHit]) -> tuple[list[SearchHit], list[SearchHit]]:
    """Hits as evidence may hold them: control characters gone from every field; and, apart,
    the hits dropped because their address does not parse (one bad hit must not sink a run)."""
    kept, dropped = [], []
    for hit in hits:
        clean = hit.model_copy(
            update={
                "url": without_any_controls(hit.url).strip(),
                "title": " ".join(without_any_controls(hit.title).split()),
                "content": without_controls(hit.content),
                "query": without_any_controls(hit.query),
            }
        )
        (kept if clean.url and parses(clean.url) else dropped).append(clean)
    return kept, dropped


class SourceRegistry:
    """Run-wide source ids, built from worker results; results rewritten to cite them."""

    def __init__(self, results: list[WorkerResult]) -> None:
        self.sources: list[SourceEvidence] = []
        self.results: list[WorkerResult] = []
        self._ids: dict[str, int] = {}
        for result in sorted(results, key=lambda r: (r.round, r.subtask_id)):
            self.results.append(self._absorb(result))

    def _register(self, source: SourceEvidence) -> int:
        """The source's run-wide id; a page seen again keeps each distinct excerpt it brought,
        and its date: the one its page states when read whole, else the first one given."""
        key = normalize_url(source.url)
        if key not in self._ids:
            self._ids[key] = len(self.sources) + 1
            self.sources.append(source.model_copy(update={"id": self._ids[key]}))
            return self._ids[key]
        known = self.sources[self._ids[key] - 1]
        if source.read and not known.read:  # a page read whole: its quotes lead the evidence
            parts = [text for text in (source.excerpt.strip(), known.excerpt.strip()) if text]
            merged = "\n…\n".join(parts)
            self.sources[self._ids[key] - 1] = known.model_copy(
                update={
                    "read": True,
                    "excerpt": merged[: max(MAX_EXCERPT_CHARS, len(source.excerpt))],
                    "published": source.published or known.published,  # the page's own word
                }
            )
            return self._ids[key]
        update = {"published": known.published or source.published}
        excerpt = source.excerpt.strip()
        if excerpt and excerpt not in known.excerpt and len(known.excerpt) < MAX_EXCERPT_CHARS:
            update["excerpt"] = f"{known.excerpt}\n…\n{excerpt}"[:MAX_EXCERPT_CHARS]
        self.sources[self._ids[key] - 1] = known.model_copy(update=update)
        return self._ids[key]

    def _absorb(self, result: WorkerResult) -> WorkerResult:
        """The result with its local source ids replaced by registry ids (unknown ids dropped)."""
        local = {source.id: self._register(source) for source in result.sources}
        findings = [
            Finding(claim=f.claim, source_ids=[local[i] for i in f.source_ids if i in local])
            for f in result.findings
        ]
        quotes = [
            replace(q, source_id=local[q.source_id]) for q in result.quotes if q.source_id in local
        ]
        sources = [self.sources[local[s.id] - 1] for s in result.sources]
        return result.model_copy(
            update={"findings": findings, "sources": sources, "quotes": quotes}
        )

    def quotes(self, source_id: int | None = None) -> list[Quote]:
        """Every worker's verbatim quotes (run-wide source ids), or those of one source."""
        return [
            q
            for r in self.results
            for q in r.quotes
            if source_id is None or q.source_id == source_id
        ]

    def from_round(self, round_: int) -> tuple[list[WorkerResult], list[SourceEvidence]]:
        """One round's results, and the sources first registered in that round."""
        results = [r for r in self.results if r.round == round_]
        earlier = {s.id for r in self.results if r.round < round_ for s in r.sources}
        fresh = {s.id for r in results for s in r.sources if s.id not in earlier}
        return results, [self.sources[i - 1] for i in sorted(fresh)]
