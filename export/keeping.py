"""A re-check and a change list as Markdown: what a person reads (their JSON is what the doors
keep). Every statement, quote, title and address came from outside, and is written as inert
one-line text (`domain.plain_text`)."""

from __future__ import annotations

from deep_research.domain.plain_text import link_address, one_line
from deep_research.state import ChangeList, CitedClaim, ClaimRecheck, Recheck, SourceRecheck

CLAIM_STATES = {
    "unchanged": "unchanged",
    "quote_kept": "page changed, quote still there",
    "quote_gone": "quote gone",
    "page_gone": "page gone",
    "unreachable": "unreachable now",
    "not_rechecked": "not re-checked (a tool's answer)",
}
SOURCE_STATES = {
    "unchanged": "unchanged",
    "changed": "changed",
    "moved": "redirects elsewhere",
    "gone": "gone",
    "unreachable": "unreachable now",
    "not_rechecked": "not re-checked",
}
TEXT_CHARS = 300  # a statement or quote as shown, at most


def _source_line(source: SourceRecheck) -> str:
    """One re-read source: number, state, answer, address."""
    answer = "no answer" if source.status is None else f"HTTP {source.status}"
    if source.status == 304:
        answer += " (not modified)"
    note = f" — {one_line(source.note, 200)}" if source.note else ""
    return (
        f"- [{source.number}] **{SOURCE_STATES[source.state]}**, {answer}: "
        f"{one_line(source.title, 120) or '(untitled)'} {link_address(source.url)}{note}"
    )


def _claim_line(claim: ClaimRecheck) -> str:
    """One re-checked claim: its state, the verdict of a check run again, the quotes."""
    line = f"- [{claim.number}] {one_line(claim.statement, TEXT_CHARS)}"
    if claim.quote:
        line += f"\n  - quote kept then: “{one_line(claim.quote, TEXT_CHARS)}”"
    if claim.verdict:
        line += f"\n  - checked again against the new text: **{claim.verdict}**"
        if claim.new_quote:
            line += f" — “{one_line(claim.new_quote, TEXT_CHARS)}”"
    return line


def recheck_markdown(recheck: Recheck) -> str:
    """A re-check: counts first, then the claims by state (changed ones first), the sources."""
    counts = ", ".join(
        f"{recheck.count(state)} {label}"  # type: ignore[arg-type]
        for state, label in CLAIM_STATES.items()
        if recheck.count(state)  # type: ignore[arg-type]
    )
    lines = [
        f"# Re-check of {one_line(recheck.thread_id, 100)}",
        "",
        f"Checked {recheck.checked}: {len(recheck.claims)} cited claims — {counts or 'none'}. "
        f"{recheck.requests} requests ({recheck.not_modified} answered not modified), "
        f"{recheck.model_calls} model calls, {recheck.seconds:.1f} s.",
    ]
    for state in ("quote_gone", "page_gone", "unreachable", "quote_kept", "not_rechecked"):
        claims = [c for c in recheck.claims if c.state == state]
        if claims:
            lines += ["", f"## {CLAIM_STATES[state].capitalize()}", ""]
            lines += [_claim_line(c) for c in claims]
    lines += ["", "## Sources", ""] + [_source_line(s) for s in recheck.sources]
    return "\n".join(lines) + "\n"


def _cited(claim: CitedClaim) -> str:
    """A claim with its citations, on one line."""
    cites = " ".join(f"[{n}] {link_address(url)}" for n, url in claim.sources)
    return f"{one_line(claim.claim, TEXT_CHARS)} ({cites})"


def change_list_markdown(changes: ChangeList) -> str:
    """A change list, as a person reads it."""
    lines = [
        f"# What changed in version {changes.version} of {one_line(changes.watch_id, 100)}",
        "",
        f"Made {changes.made}: {one_line(changes.thread_id, 100)} against "
        f"{one_line(changes.previous, 100)}.",
    ]
    if changes.empty:
        lines += ["", "Nothing changed."]
    if changes.changed_figures:
        lines += ["", "## Figures that changed", ""]
        for figure in changes.changed_figures:
            lines += [
                f"- **{one_line(figure.old_value, 60)} → {one_line(figure.new_value, 60)}**",
                f"  - before: {_cited(figure.old)}",
                f"  - now: {_cited(figure.new)}",
            ]
    if changes.new_findings:
        lines += ["", "## New findings", ""] + [f"- {_cited(c)}" for c in changes.new_findings]
    if changes.no_longer_supported:
        lines += ["", "## No longer supported", ""]
        lines += [
            f"- {_cited(d.claim)}\n  - why: {one_line(d.why, TEXT_CHARS)}"
            for d in changes.no_longer_supported
        ]
    if changes.sources_gone:
        lines += ["", "## Sources gone", ""] + [_source_line(s) for s in changes.sources_gone]
    if changes.left_out:
        lines += ["", "## Left out (their sources still say them)", ""]
        lines += [f"- {_cited(c)}" for c in changes.left_out]
    if changes.unresolved:
        lines += ["", "## Not compared (no valid reading came from the model)", ""]
        lines += [f"- {_cited(c)}" for c in changes.unresolved]
    return "\n".join(lines) + "\n"
