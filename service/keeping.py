"""Keeping reports true, for every door: what a finished run's citations rest on, a re-check of
them against today's sources, and watched questions. Each call checks the caller against the
run's owner (`RunService.read`: UnknownRun for a run it may not see), as the rest of the
service does; the work itself is in `graph.keeping`, `graph.recheck` and `service.watch`.
"""

from __future__ import annotations

from typing import Any

from deep_research.graph.keeping import EvidenceView, evidence_of
from deep_research.graph.recheck import finished_values, recheck_thread
from deep_research.service.caller import Caller
from deep_research.service.runs import RunService, UnknownRun
from deep_research.service.watch import NotWatchable, start_watching
from deep_research.state import ChangeList, Recheck, Source
from deep_research.tools.evidence.store import Kept
from deep_research.tools.watches import Version, Watch

REMOTE_SHORTEST_PERIOD = 3600  # seconds: a remote caller's watch makes at most a version an hour


class NothingKept(LookupError):
    """No change list (or re-check) of that run is kept yet."""


async def evidence(
    service: RunService, caller: Caller, run_id: str, number: int, chars: int
) -> EvidenceView:
    """Citation `number` of a finished run: the stored text around each of its quotes."""
    await service.read(caller, run_id)
    store = service.store
    return await evidence_of(store.graph, store.evidence, run_id, number, chars)


async def kept_sources(
    service: RunService, caller: Caller, run_id: str
) -> tuple[list[Source], dict[int, Kept]]:
    """A finished run's cited sources, and what was kept of each (by citation number)."""
    await service.read(caller, run_id)
    values = await finished_values(service.store.graph, run_id)
    kept = {row.number: row for row in await service.store.evidence.kept(run_id)}
    return [s for s in values.get("sources") or [] if s.number], kept


async def recheck(service: RunService, caller: Caller, run_id: str) -> Recheck:
    """Re-check a finished run's citations now, reading with this process's settings for what
    it reads and fetches (never the stored run's); the result is kept beside the run."""
    await service.read(caller, run_id)
    store = service.store
    done = await recheck_thread(
        store.graph,
        store.evidence,
        run_id,
        models=store.runs.models,
        executing=service.admission.executing,
    )
    return done.recheck


async def latest_recheck(service: RunService, caller: Caller, run_id: str) -> Recheck | None:
    """The last re-check kept beside a run, or None."""
    await service.read(caller, run_id)
    kept = await service.store.evidence.rechecks(run_id)
    return Recheck.model_validate_json(kept[-1]) if kept else None


async def watch(
    service: RunService, caller: Caller, run_id: str, every_seconds: int, **how: Any
) -> Watch:
    """Watch a finished run's question (`service.watch.start_watching`); a remote caller (the
    web, MCP) at most once an hour: each version is a paid run."""
    if service.admission.operator.remote and every_seconds < REMOTE_SHORTEST_PERIOD:
        raise NotWatchable("a question is watched at most once an hour from here (1h)")
    return await start_watching(service, caller, run_id, every_seconds, **how)


async def watch_of(service: RunService, caller: Caller, run_id: str) -> Watch | None:
    """The watch a run starts (its id is the watch's), or None."""
    await service.read(caller, run_id)
    return await service.store.watches.get(run_id)


async def unwatch(service: RunService, caller: Caller, watch_id: str) -> bool:
    """Stop watching (the versions made stay); False when it was not watched."""
    await service.read(caller, watch_id)
    return await service.store.watches.stop(watch_id)


async def watches(service: RunService, caller: Caller) -> list[Watch]:
    """Every watch on a run the caller may see, soonest due first."""
    seen = []
    for kept in await service.store.watches.all():
        try:
            await service.read(caller, kept.watch_id)
        except UnknownRun:
            continue
        seen.append(kept)
    return seen


async def versions(service: RunService, caller: Caller, watch_id: str) -> list[Version]:
    """A watch's versions after the first run, oldest first (also once it is stopped)."""
    await service.read(caller, watch_id)
    return await service.store.watches.versions(watch_id)


async def change_list(
    service: RunService, caller: Caller, watch_id: str, number: int | None = None
) -> ChangeList:
    """A version's change list (the latest when `number` is None); NothingKept when none is."""
    made = [v for v in await versions(service, caller, watch_id) if v.changes]
    chosen = [v for v in made if number is None or v.version == number]
    if not chosen:
        which = f"version {number}" if number is not None else "any version"
        raise NothingKept(f"no change list of {which} of {watch_id!r} is kept yet")
    return ChangeList.model_validate_json(chosen[-1].changes)
