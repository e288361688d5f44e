"""A finished report re-checked against its sources as they are now.

Each cited source is read again through the guarded reader with the validators its server sent
(`tools.evidence.reread`), and every cited claim (a kept citation: statement, source, quote) is
sorted by what that says (`domain.recheck_rules`): unchanged, page changed but the quote still
there, quote gone, page gone, unreachable now. Only a claim whose quote is gone costs a model
call: the citation check runs again on it against the new text (`nodes.verifying.check_claims`,
any language), so a re-check of a report whose pages did not change makes none. The result is
kept beside the run (`evidence_rechecks`), and the new text of every page that changed is kept
as the re-check's reads (what a watched question's next version starts from).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from deep_research.domain.claims import cited_pairs
from deep_research.domain.evidence_text import content_hash
from deep_research.domain.recheck_rules import claim_state, source_state
from deep_research.domain.sources import normalize_url
from deep_research.graph.threads import run_ended, thread_config
from deep_research.nodes.verifying import check_claims
from deep_research.settings import Settings, settings_from
from deep_research.state import (
    ClaimRecheck,
    Recheck,
    Source,
    SourceEvidence,
    SourceRecheck,
    Usage,
)
from deep_research.tools.evidence.reads import PageRead
from deep_research.tools.evidence.reread import Reread, reread
from deep_research.tools.evidence.store import RECHECK_READER, EvidenceStore, Kept
from deep_research.tools.models import ModelSource, chat_model
from deep_research.tools.process_wide import current
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.search.pages import PAGE_CHARS, PageFetcher, best_passages

REREADS_AT_ONCE = 4  # sources read again at the same time


class NotRecheckable(LookupError):
    """The thread names no finished run (unknown, or still going)."""


@dataclass(frozen=True)
class RecheckDone:
    """A re-check, and the sources' texts as they are now where they changed (by source)."""

    recheck: Recheck
    fresh: dict[str, PageRead]


def now_iso() -> str:
    """The time now, ISO 8601 UTC to the second."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def finished_values(graph: Any, thread_id: str) -> dict[str, Any]:
    """A finished run's state values; NotRecheckable when unknown or unfinished."""
    snapshot = await graph.aget_state(thread_config(thread_id))
    if not snapshot.values:
        raise NotRecheckable(f"no run with thread id {thread_id!r}")
    if not run_ended(snapshot):
        raise NotRecheckable(f"the run {thread_id!r} has not finished: resume it first")
    return snapshot.values


def _before(source: Source, kept: dict[int, Kept]) -> tuple[PageRead, str]:
    """What the run kept of a source (its read and the hash of the text read); a source kept
    before evidence was kept is a snippet with no known text."""
    row = kept.get(source.number or 0)
    if row is None:
        return PageRead(url=source.url, kind="snippet", text="", fetched_at=None), ""
    return row.read, row.sha256


def _sorted_source(source: Source, before: PageRead, sha256: str, again: Reread) -> SourceRecheck:
    """A source's state from its read again."""
    new_hash = content_hash(again.text) if again.status == 200 else ""
    if again.status is None and before.kind == "tool" and not before.url.startswith("http"):
        state = "not_rechecked"
    else:
        old_url = before.final_url or before.url
        state = source_state(again.status, old_url, again.final_url, sha256, new_hash)
    note = again.note or (f"now at {again.final_url}" if state == "moved" else "")
    return SourceRecheck(
        number=source.number or 0,
        url=source.url,
        title=source.title,
        kind=before.kind,
        state=state,
        status=again.status,
        final_url=again.final_url,
        conditional=again.conditional,
        fetched=before.fetched,
        sha256=sha256,
        new_sha256=new_hash,
        note=note,
    )


async def recheck_thread(
    graph: Any,
    evidence: EvidenceStore,
    thread_id: str,
    *,
    models: ModelSource = chat_model,
    executing: Callable[[Settings], Settings] = lambda stored: stored,
) -> RecheckDone:
    """Re-check a finished run's citations against their sources now; keep and return it.
    `executing` gives the settings it reads with (what reads pages, and how, is the process's
    that re-checks: `service.admission.Admission.executing`)."""
    began = time.monotonic()
    values = await finished_values(graph, thread_id)
    settings = executing(settings_from(values["settings"]))
    sources: list[Source] = [s for s in values.get("sources") or [] if s.number]
    kept = {row.number: row for row in await evidence.kept(thread_id)}
    befores = {s.number: _before(s, kept) for s in sources}
    fetcher = PageFetcher(settings, current().search_clients.tls())
    slots = asyncio.Semaphore(REREADS_AT_ONCE)

    async def again(source: Source) -> Reread:
        async with slots:
            return await reread(befores[source.number][0], fetcher, settings.page_timeout)

    answers = dict(
        zip(
            [s.number for s in sources],
            await asyncio.gather(*(again(s) for s in sources)),
            strict=True,
        )
    )
    rechecked = {
        s.number: _sorted_source(s, *befores[s.number], answers[s.number]) for s in sources
    }
    claims, usage = await _sorted_claims(values, sources, rechecked, answers, settings, models)
    web = [s for s in sources if befores[s.number][0].url.startswith(("http:", "https:"))]
    result = Recheck(
        thread_id=thread_id,
        checked=now_iso(),
        sources=list(rechecked.values()),
        claims=claims,
        model_calls=usage.llm_calls,
        usage=usage,
        requests=len(web),
        not_modified=sum(answers[s.number].status == 304 for s in web),
        seconds=round(time.monotonic() - began, 3),
    )
    fresh = {
        normalize_url(s.url): answers[s.number].as_read(befores[s.number][0])
        for s in sources
        if rechecked[s.number].state in ("changed", "moved") and answers[s.number].text
    }
    await _keep(evidence, thread_id, result, fresh)
    return RecheckDone(result, fresh)


async def _sorted_claims(
    values: dict[str, Any],
    sources: list[Source],
    rechecked: dict[int, SourceRecheck],
    answers: dict[int, Reread],
    settings: Any,
    models: ModelSource,
) -> tuple[list[ClaimRecheck], Usage]:
    """Every cited claim sorted by its source's state; those whose quote is gone checked again
    by the citation check against the new text. Returns them and what the model calls cost."""
    claims = [
        ClaimRecheck(
            statement=pair.statement,
            number=pair.number,
            quote=pair.quote,
            state=claim_state(rechecked[pair.number].state, pair.quote, answers[pair.number].text),
        )
        for pair in cited_pairs(values)
        if pair.number in rechecked
    ]
    gone = [c for c in claims if c.state == "quote_gone"]
    if not gone:
        return claims, Usage()
    by_number = {s.number: s for s in sources}
    evidence = {}
    for claim in gone:  # each pair sees the new text nearest its claim and its old quote
        source = by_number[claim.number]
        passages = answers[claim.number].text.split("\n\n")
        excerpt = best_passages(passages, f"{claim.statement} {claim.quote}", PAGE_CHARS)
        evidence[len(evidence) + 1] = SourceEvidence(
            id=len(evidence) + 1, url=source.url, title=source.title, excerpt=excerpt
        )
    client = LiveRuns(models).detached(settings).model_client()
    checks, usage = await check_claims(
        [(claim.statement, n) for n, claim in enumerate(gone, 1)], evidence, client
    )
    for claim, check in zip(gone, checks, strict=True):
        claim.verdict, claim.new_quote = check.verdict, check.evidence
    return claims, usage


async def _keep(
    evidence: EvidenceStore, thread_id: str, result: Recheck, fresh: dict[str, PageRead]
) -> None:
    """Keep the re-check beside its run, and the changed pages' new texts as its reads (the
    latest re-check's only)."""
    reader = RECHECK_READER.format(thread_id=thread_id)
    await evidence.forget_reads(reader)
    for read in fresh.values():
        await evidence.note_read(reader, read)
    await evidence.save_recheck(thread_id, time.time(), result.model_dump_json())
