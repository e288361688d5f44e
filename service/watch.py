"""Watched questions: a finished run researched again on a schedule, each version a follow-up of
the one before, each with a claim-level change list against it.

A version is made in four steps, each of which a version killed midway finds done or does:
1. the version before is re-checked (`graph.recheck`): what it cited is read again;
2. the new version starts from that version's evidence (`nodes.follow_up`), with what no longer
   holds taken out (a source gone, a page changed under its quotes: its new text instead), and
   researches what its review finds missing, like any follow-up; it is a run of the run
   service (admitted with this process's ceilings and server-only settings, owned by whoever
   owns the watched run), and a version killed here resumes from its checkpoint (its run id is
   named by its number: `WATCH-vN`);
3. the change list against the version before (`nodes.change_list`) is kept with it;
4. it is posted to the watch's webhook, if any.
The schedule and who holds a version are in `tools.watches`; `run_due` makes what is due (for a
system timer), and the job queue's periodic tick does the same on its workers (`watch_queue`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from deep_research.domain.budgets import cost_usd
from deep_research.domain.claims import report_claims
from deep_research.domain.sources import normalize_url
from deep_research.graph.recheck import finished_values, now_iso, recheck_thread
from deep_research.graph.threads import run_ended, standing, thread_config
from deep_research.nodes.change_list import compare, dropped_claims, figure_changes
from deep_research.nodes.follow_up import Stale, refreshed
from deep_research.service.caller import Caller
from deep_research.service.runs import RunService
from deep_research.settings import Settings, settings_from
from deep_research.state import ChangeList, Recheck, Usage, WorkerResult
from deep_research.tools.evidence.store import RECHECK_READER
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.watches import LEASE_SECONDS, Claim, Limits, Watch, WatchStore
from deep_research.tools.webhook import post

Say = Callable[[str], None]


class NotWatchable(ValueError):
    """The run cannot be watched (unknown, unfinished, nothing found, limits it cannot keep)."""


class LeaseLost(RuntimeError):
    """Another process took over the version this one was making."""


async def start_watching(
    service: RunService,
    caller: Caller,
    thread_id: str,
    every_seconds: int,
    limits: Limits | None = None,
    *,
    webhook: str = "",
    secret_env: str = "",
    webhook_private: bool = False,
    now: float | None = None,
) -> Watch:
    """Watch a finished run the caller may see: its next version is due `every_seconds` from
    now (a watch already kept is given the new schedule; its versions stay)."""
    limits = limits or Limits()
    watches = service.store.watches
    try:
        await service.read(caller, thread_id)
        values = await finished_values(service.store.graph, thread_id)
    except LookupError as error:  # UnknownRun, or not finished
        raise NotWatchable(str(error)) from None
    if not any(r.sources for r in values.get("worker_results") or []):
        raise NotWatchable(f"the run {thread_id!r} found no evidence to start a version from")
    caps = {
        "max_total_tokens": limits.version_max_tokens,
        "max_cost_usd": limits.version_max_cost_usd,
    }
    try:
        settings_from({**values["settings"].model_dump(), **{k: v for k, v in caps.items() if v}})
        if limits.month_max_cost_usd is not None:
            settings_from(
                {**values["settings"].model_dump(), "max_cost_usd": limits.month_max_cost_usd}
            )
    except ValueError as error:
        raise NotWatchable(f"the watch's budget cannot be kept: {error}") from None
    if webhook and not os.environ.get(secret_env):
        raise NotWatchable(f"a webhook's change lists are signed: set ${secret_env} first")
    now = time.time() if now is None else now
    earlier = await watches.get(thread_id)
    watch = Watch(
        watch_id=thread_id,
        question=values["question"],
        every_seconds=every_seconds,
        next_due=now + every_seconds,
        version=earlier.version if earlier else 1,
        latest=earlier.latest if earlier else thread_id,
        pending=earlier.pending if earlier else "",
        lease_until=earlier.lease_until if earlier else 0.0,
        limits=limits,
        webhook=webhook,
        secret_env=secret_env,
        webhook_private=webhook_private,
        created=earlier.created if earlier else now,
    )
    await watches.add(watch)
    return watch


def stale_sources(recheck: Recheck, fresh: dict[str, Any]) -> dict[str, Stale]:
    """The sources whose earlier evidence no longer holds, by normalised URL: their new text
    (None when they are gone) and their old quotes. A page that changed while every quote on
    it stayed is not stale (what it was cited for still stands)."""
    stale: dict[str, Stale] = {}
    for source in recheck.sources:
        claims = [c for c in recheck.claims if c.number == source.number]
        states = {c.state for c in claims}
        key = normalize_url(source.url)
        if source.state == "gone" or "page_gone" in states:
            stale[key] = Stale(None)
        elif "quote_gone" in states and key in fresh:
            stale[key] = Stale(fresh[key].text, tuple(c.quote for c in claims if c.quote))
    return stale


async def version_input(
    service: RunService, claim: Claim
) -> tuple[str, Settings, list[WorkerResult]]:
    """The next version's question, settings and evidence: the version before re-checked, its
    evidence refreshed."""
    store = service.store
    previous = await finished_values(store.graph, claim.previous)
    done = await recheck_thread(
        store.graph,
        store.evidence,
        claim.previous,
        models=store.runs.models,
        executing=service.admission.executing,  # read with this process's settings
    )
    carried = [r for r in previous.get("worker_results") or [] if r.status != "failed"]
    results = refreshed(carried, stale_sources(done.recheck, done.fresh))
    saved = previous["settings"]
    settings = saved.model_copy(
        update={
            "approve_plan": False,  # nobody is there to approve a scheduled version's plan
            "min_iterations": max(2, saved.min_iterations),  # at least one round for what is new
            "max_iterations": max(2, saved.max_iterations),
            "max_total_tokens": claim.max_tokens or saved.max_total_tokens,
            "max_cost_usd": claim.max_cost_usd or saved.max_cost_usd,
        }
    )
    evidence = [r for r in results if r.sources]
    return previous["question"], settings_from(settings.model_dump()), evidence


async def owner_of(service: RunService, watch_id: str) -> Caller:
    """Who a watch's versions belong to: whoever owns the watched run (its door and user)."""
    row = await service.store.index.get(watch_id)
    if row is None or row.door not in ("cli", "mcp", "web"):
        return Caller("cli")  # a run the index never knew: the store's own door
    return Caller(row.door, row.owner)  # type: ignore[arg-type]


async def _start_version(service: RunService, claim: Claim, caller: Caller) -> None:
    """Put a claimed version in the store as a run of the service (not begun)."""
    question, settings, evidence = await version_input(service, claim)
    admitted = await service.admission.inherited(question, settings)
    await service.start(
        caller,
        admitted,
        run_id=claim.thread_id,
        parent=claim.previous,
        prior=evidence,
        refreshed_by=RECHECK_READER.format(thread_id=claim.previous),
        launch=False,
    )


async def _holding(watches: WatchStore, claim: Claim, work: Awaitable[Any], lease: float) -> Any:
    """Await `work` while renewing the claim's lease; LeaseLost (and `work` cancelled) when
    another process has taken the version over."""

    async def renew() -> None:
        while True:
            await asyncio.sleep(lease / 3)
            if not await watches.renew(claim, lease):
                raise LeaseLost(f"{claim.thread_id} was taken over by another process")

    renewer = asyncio.ensure_future(renew())
    worker = asyncio.ensure_future(work)
    try:
        await asyncio.wait({renewer, worker}, return_when=asyncio.FIRST_COMPLETED)
        if not worker.done():
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
            renewer.result()
        return worker.result()
    finally:
        renewer.cancel()
        await asyncio.gather(renewer, return_exceptions=True)


async def changes_between(
    claim: Claim, old: dict[str, Any], new: dict[str, Any], recheck: Recheck | None, runs: LiveRuns
) -> ChangeList:
    """The change list of a version against the one before, claim by claim."""
    old_claims = report_claims(old["report"], old.get("sources") or [])
    new_claims = report_claims(new["report"], new.get("sources") or [])
    client = runs.detached(settings_from(new["settings"])).model_client()
    comparison = await compare(old_claims, new_claims, client)
    unsupported, left_out = dropped_claims(old_claims, comparison, recheck)
    readings = list(zip(new_claims, comparison.readings, strict=True))
    gone_numbers = {c.number for c in (recheck.claims if recheck else []) if c.state == "page_gone"}
    return ChangeList(
        watch_id=claim.watch.watch_id,
        version=claim.version,
        thread_id=claim.thread_id,
        previous=claim.previous,
        made=now_iso(),
        new_findings=[c for c, r in readings if r.relation == "new"],
        changed_figures=figure_changes(old_claims, new_claims, comparison),
        no_longer_supported=unsupported,
        sources_gone=[
            s
            for s in (recheck.sources if recheck else [])
            if s.state == "gone" or (s.state == "moved" and s.number in gone_numbers)
        ],
        left_out=left_out,
        unresolved=[c for c, r in readings if r.relation == "unresolved"],
        model_calls=comparison.usage.llm_calls,
        usage=comparison.usage,
    )


async def make_version(
    service: RunService, claim: Claim, say: Say = lambda text: None, lease: float = LEASE_SECONDS
) -> ChangeList:
    """Make one claimed version to its end (or finish one a killed process left), keep its
    change list, and post it to the watch's webhook; a version already finished is read back."""
    store = service.store
    graph, runs, evidence, watches = store.graph, store.runs, store.evidence, store.watches
    recorded = next(
        (v for v in await watches.versions(claim.watch.watch_id) if v.version == claim.version),
        None,
    )
    if recorded is not None and recorded.finished is not None:
        return ChangeList.model_validate_json(recorded.changes)
    config = thread_config(claim.thread_id)
    snapshot = await graph.aget_state(config)
    if not run_ended(snapshot):
        begun = standing(snapshot) != "unknown"
        say(f"{claim.thread_id}: {'resumed' if begun else 'started'}")
        if not begun:
            await _start_version(service, claim, await owner_of(service, claim.watch.watch_id))
        await _holding(watches, claim, service.execute(claim.thread_id), lease)
        snapshot = await graph.aget_state(config)
        if not run_ended(snapshot):
            raise RuntimeError(
                f"{claim.thread_id} stopped before its end, at {list(snapshot.next)}"
            )
    new = snapshot.values
    old = await finished_values(graph, claim.previous)
    rechecks = await evidence.rechecks(claim.previous)
    recheck = Recheck.model_validate_json(rechecks[-1]) if rechecks else None
    changes = await changes_between(claim, old, new, recheck, runs)
    spent = version_spending(new, recheck, changes)
    await watches.finish(claim, spent.total_tokens, _cost(spent, new), changes.model_dump_json())
    say(f"{claim.thread_id}: done; {summary(changes)}")
    if claim.watch.webhook:
        secret = os.environ.get(claim.watch.secret_env, "")
        outcome = (
            await post(
                claim.watch.webhook,
                changes.model_dump_json().encode("utf-8"),
                secret,
                allow_private=claim.watch.webhook_private,
            )
            if secret
            else f"not delivered: ${claim.watch.secret_env} is not set"
        )
        await watches.delivered(claim, outcome)
        say(f"{claim.thread_id}: webhook {outcome}")
    return changes


def version_spending(new: dict[str, Any], recheck: Recheck | None, changes: ChangeList) -> Usage:
    """What a version cost: its run, the re-check it started from, its change list."""
    return (new.get("usage") or Usage()) + (recheck.usage if recheck else Usage()) + changes.usage


def _cost(spent: Usage, new: dict[str, Any]) -> float | None:
    """A version's spending in dollars (None: a model has no price)."""
    return cost_usd(spent, settings_from(new["settings"]))


def summary(changes: ChangeList) -> str:
    """A change list in one line of counts."""
    return (
        f"{len(changes.new_findings)} new, {len(changes.changed_figures)} figures changed, "
        f"{len(changes.no_longer_supported)} no longer supported, "
        f"{len(changes.sources_gone)} sources gone"
    )


async def run_due(
    service: RunService, say: Say = lambda text: None, lease: float = LEASE_SECONDS
) -> tuple[list[ChangeList], list[str]]:
    """Make every version due now, one after another (what a system timer calls). A version
    that fails is said and given back (the next call resumes it from its checkpoint); the
    others go on. Returns the change lists made and the versions that failed."""
    made, failed = [], []
    watches = service.store.watches
    for claim in await watches.claim_due(lease=lease):
        try:
            made.append(await make_version(service, claim, say, lease))
        except Exception as error:  # this version failed (said, counted); the others go on
            say(f"{claim.thread_id}: failed ({type(error).__name__}: {error}); it resumes later")
            await watches.release(claim)
            failed.append(claim.thread_id)
    return made, failed
