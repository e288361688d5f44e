"""The change list between two versions of a watched report, claim by claim.

Claims that read the same are matched without a model call. Every other new claim goes to the
model with the earlier claims still unmatched (`prompts.claim_changes`, in batches): the same
claim in other words or another language, the same quantity with another figure (both values,
each as its claim writes it: one not written there is refused and asked again), or new. An
earlier claim no new claim corresponds to is no longer made: the re-check of the earlier version
says why (its source gone, no longer saying it, unreachable), or that its source still says it
and the new version leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass

from deep_research.domain.claims import figure_in, same_key
from deep_research.nodes import prompts
from deep_research.state import (
    CitedClaim,
    ClaimMatch,
    ClaimMatches,
    ClaimRecheck,
    DroppedClaim,
    FigureChange,
    Recheck,
    Usage,
)
from deep_research.tools.model_client import ModelClient
from deep_research.tools.structured import StructuredOutputError, ask

NEW_CLAIMS_AT_ONCE = 40  # new claims per model call
REASKS = 2  # times the claims a valid reply left out (or misread) are asked again


@dataclass(frozen=True)
class Reading:
    """How one new claim relates to the earlier version (`old`: index of the earlier claim)."""

    relation: str  # same, figure_changed, new, or unresolved (no valid answer came)
    old: int | None = None
    old_value: str = ""
    new_value: str = ""


@dataclass(frozen=True)
class Comparison:
    """Every new claim's reading, what it cost, and the earlier claims none corresponds to."""

    readings: list[Reading]
    dropped: list[int]
    usage: Usage


def _valid(match: ClaimMatch, old: list[CitedClaim], new: list[CitedClaim]) -> Reading | None:
    """A model's match as a reading of `new[match.new - 1]`, or None when it breaks the rules:
    an unknown number, a match without its earlier claim, or a figure not written in its claim."""
    if not 1 <= match.new <= len(new):
        return None
    if match.relation == "new":
        return Reading("new")
    if match.old is None or not 1 <= match.old <= len(old):
        return None
    if match.relation == "same":
        return Reading("same", match.old - 1)
    earlier, later = old[match.old - 1].claim, new[match.new - 1].claim
    if not (figure_in(match.old_value, earlier) and figure_in(match.new_value, later)):
        return None
    return Reading("figure_changed", match.old - 1, match.old_value, match.new_value)


async def _ask(
    old: list[CitedClaim], new: list[CitedClaim], client: ModelClient
) -> tuple[dict[int, Reading], Usage]:
    """The model's valid readings of `new` against `old`, by index in `new`."""
    messages = prompts.claim_changes(
        [c.claim for c in old], [c.claim for c in new], client.settings.max_context_tokens
    )
    try:
        answer, usage = await ask(ClaimMatches, messages, role="reviewer", client=client)
    except StructuredOutputError as error:
        return {}, error.usage
    found: dict[int, Reading] = {}
    for match in answer.matches:
        reading = _valid(match, old, new)
        if reading is not None:
            found.setdefault(match.new - 1, reading)
    return found, usage


async def _by_model(
    old: list[CitedClaim], new: list[CitedClaim], client: ModelClient
) -> tuple[list[Reading], Usage]:
    """Each new claim read against the earlier ones, in batches; what a valid reply left out
    (or misread) is asked again while replies still answer some."""
    readings: dict[int, Reading] = {}
    usage = Usage()
    for start in range(0, len(new), NEW_CLAIMS_AT_ONCE):
        batch = list(range(start, min(start + NEW_CLAIMS_AT_ONCE, len(new))))
        for _ in range(1 + REASKS):
            asked = [i for i in batch if i not in readings]
            if not asked:
                break
            found, cost = await _ask(old, [new[i] for i in asked], client)
            usage += cost
            readings.update({asked[k]: reading for k, reading in found.items()})
            if not found:
                break
    return [readings.get(i, Reading("unresolved")) for i in range(len(new))], usage


async def compare(old: list[CitedClaim], new: list[CitedClaim], client: ModelClient) -> Comparison:
    """Read every new claim against the earlier version: the same words settle it at once, the
    model reads the rest against the earlier claims left unmatched."""
    keys = {same_key(claim.claim): i for i, claim in enumerate(old)}
    readings: dict[int, Reading] = {
        j: Reading("same", keys[same_key(c.claim)])
        for j, c in enumerate(new)
        if same_key(c.claim) in keys
    }
    matched = {reading.old for reading in readings.values()}
    open_old = [i for i in range(len(old)) if i not in matched]
    open_new = [j for j in range(len(new)) if j not in readings]
    usage = Usage()
    if open_new and open_old:
        found, usage = await _by_model(
            [old[i] for i in open_old], [new[j] for j in open_new], client
        )
        for j, reading in zip(open_new, found, strict=True):
            if reading.old is not None:
                reading = Reading(
                    reading.relation, open_old[reading.old], reading.old_value, reading.new_value
                )
            readings[j] = reading
    else:
        readings |= {j: Reading("new") for j in open_new}
    matched = {reading.old for reading in readings.values()}
    ordered = [readings[j] for j in range(len(new))]
    return Comparison(ordered, [i for i in range(len(old)) if i not in matched], usage)


def why_dropped(claim: CitedClaim, recheck: Recheck | None) -> str | None:
    """Why an earlier claim no longer holds, from the re-check of its version; None when its
    sources still support it (the new version only leaves it out)."""
    checks = [
        c
        for c in (recheck.claims if recheck else [])
        if same_key(c.statement) == same_key(claim.claim)
    ]
    if not checks:
        return "the new version no longer makes it"
    if any(_holds(check) for check in checks):
        return None
    return "; ".join(_reason(check, recheck) for check in checks)


def _holds(check: ClaimRecheck) -> bool:
    """True when a re-checked citation still supports its claim."""
    return check.state in ("unchanged", "quote_kept", "not_rechecked") or (
        check.state == "quote_gone" and check.verdict in ("supported", "partial")
    )


def _reason(check: ClaimRecheck, recheck: Recheck | None) -> str:
    """One citation's reason, in words."""
    source = (
        next((s for s in recheck.sources if s.number == check.number), None) if recheck else None
    )
    where = f"source [{check.number}]"
    if check.state == "page_gone":
        if source and source.state == "moved":
            return f"{where} now redirects elsewhere ({source.final_url}) without it"
        status = f" (HTTP {source.status})" if source and source.status else ""
        return f"{where} is gone{status}"
    if check.state == "unreachable":
        note = f": {source.note}" if source and source.note else ""
        return f"{where} could not be reached now{note}"
    said = f"; it now says: “{check.new_quote}”" if check.new_quote else ""
    return f"{where} no longer says it{said}"


def figure_changes(
    old: list[CitedClaim], new: list[CitedClaim], comparison: Comparison
) -> list[FigureChange]:
    """The figures that changed, each value with its claim and citations."""
    return [
        FigureChange(old=old[r.old], new=new[j], old_value=r.old_value, new_value=r.new_value)
        for j, r in enumerate(comparison.readings)
        if r.relation == "figure_changed" and r.old is not None
    ]


def dropped_claims(
    old: list[CitedClaim], comparison: Comparison, recheck: Recheck | None
) -> tuple[list[DroppedClaim], list[CitedClaim]]:
    """The earlier claims no new claim corresponds to: those no longer supported (and why),
    and those still supported that the new version leaves out."""
    unsupported, left_out = [], []
    for index in comparison.dropped:
        why = why_dropped(old[index], recheck)
        if why is None:
            left_out.append(old[index])
        else:
            unsupported.append(DroppedClaim(claim=old[index], why=why))
    return unsupported, left_out
