"""Citation verification: every cited statement checked against the text its source returned.

The lexical pass settles only the obvious (a close, in-order copy of a source sentence, or a
source with no text); the reviewer model judges every other pair, in batches that fit the context
budget. Unsupported citations are removed; a statement left with no support is rewritten by the
writer from the evidence it does have, and the rewrite is checked the same way, or it is marked.
"""

from __future__ import annotations

import re
from collections import Counter

from deep_research.domain.citations import clean_citations
from deep_research.domain.context import estimate_tokens
from deep_research.domain.language import run_language, words_for
from deep_research.domain.lexical import best_quote, close_match, lexical_verdict
from deep_research.domain.markup import (
    MARKER_RUN,
    code_spans,
    ids_in,
    markers,
    outside_code,
    rewrite_markers,
    strip_markers,
)
from deep_research.domain.sources import SourceRegistry
from deep_research.domain.statements import CitedStatement, cited_statements, closed_like
from deep_research.nodes import prompts
from deep_research.state import (
    CitationCheck,
    PairVerdicts,
    ResearchState,
    SourceEvidence,
    StatementRewrites,
    Usage,
)
from deep_research.tools.events import CitationsChecked, emit
from deep_research.tools.model_client import ModelClient
from deep_research.tools.run_resources import LiveRuns
from deep_research.tools.structured import StructuredOutputError, ask

Claim = tuple[str, int]  # (statement text, source id)
REASKS = 3  # times the pairs a valid reply left out are asked again, while replies answer some


def _lexical(claim: Claim, sources: dict[int, SourceEvidence]) -> CitationCheck | None:
    """The lexical pass's check of one claim, or None when the model has to judge it."""
    text, source_id = claim
    excerpt = sources[source_id].excerpt
    verdict = lexical_verdict(text, excerpt)
    if verdict is None:
        return None
    quote = close_match(text, excerpt) if verdict == "supported" else ""
    return CitationCheck(statement=text, source_id=source_id, verdict=verdict, evidence=quote)


def _batches(blocks: list[str], room: int) -> list[list[int]]:
    """Indexes of blocks grouped so that each group fits in `room` tokens."""
    groups: list[list[int]] = [[]]
    used = 0
    for index, block in enumerate(blocks):
        cost = estimate_tokens(block) + 2
        if groups[-1] and used + cost > room:
            groups.append([])
            used = 0
        groups[-1].append(index)
        used += cost
    return [group for group in groups if group]


def _unchecked(claim: Claim) -> CitationCheck:
    """A pair the model gave no valid verdict on: not kept, since nothing checked it."""
    text, source_id = claim
    return CitationCheck(
        statement=text, source_id=source_id, verdict="unsupported", method="fallback"
    )


async def _ask_batch(
    claims: list[Claim], sources: dict[int, SourceEvidence], client: ModelClient, room: int
) -> tuple[dict[int, CitationCheck], Usage]:
    """The model's checks of one batch of claims, by their index in the batch."""
    blocks = [
        prompts.pair_block(n, text, sources[s], room) for n, (text, s) in enumerate(claims, 1)
    ]
    try:
        answer, usage = await ask(
            PairVerdicts, prompts.verify_pairs(blocks), role="reviewer", client=client
        )
    except StructuredOutputError as error:
        return {}, error.usage
    found = {}
    for verdict in answer.verdicts:
        if 1 <= verdict.pair <= len(claims) and verdict.pair - 1 not in found:
            text, source_id = claims[verdict.pair - 1]
            found[verdict.pair - 1] = CitationCheck(
                statement=text,
                source_id=source_id,
                verdict=verdict.verdict,
                evidence=verdict.quote or best_quote(text, sources[source_id].excerpt),
                method="model",
            )
    return found, usage


async def _judge(
    claims: list[Claim], sources: dict[int, SourceEvidence], client: ModelClient
) -> tuple[list[CitationCheck], Usage]:
    """The model's checks of `claims`, batch by batch; pairs a reply left out are asked again."""
    room = prompts.verify_room(client.settings.max_context_tokens)
    blocks = [prompts.pair_block(n, t, sources[s], room) for n, (t, s) in enumerate(claims, 1)]
    checks: dict[int, CitationCheck] = {}
    usage = Usage()
    for group in _batches(blocks, room):
        found, cost = await _ask_batch([claims[g] for g in group], sources, client, room)
        usage += cost
        checks.update({group[k]: check for k, check in found.items()})
        for _ in range(REASKS):  # a valid reply that left pairs out: ask for those alone
            skipped = [g for g in group if g not in checks]
            if not (found and skipped):
                break
            found, cost = await _ask_batch([claims[g] for g in skipped], sources, client, room)
            usage += cost
            checks.update({skipped[k]: check for k, check in found.items()})
    return [checks.get(i) or _unchecked(claim) for i, claim in enumerate(claims)], usage


async def check_claims(
    claims: list[Claim], sources: dict[int, SourceEvidence], client: ModelClient
) -> tuple[list[CitationCheck], Usage]:
    """Every claim checked: by the lexical pass where it is obvious, else by the model."""
    settled = [_lexical(claim, sources) for claim in claims]
    undecided = [i for i, check in enumerate(settled) if check is None]
    if not undecided:
        return settled, Usage()
    judged, usage = await _judge([claims[i] for i in undecided], sources, client)
    for i, check in zip(undecided, judged, strict=True):
        settled[i] = check
    return settled, usage


def _marked_row(report: str, statement: CitedStatement, mark: str) -> str:
    """A table row without its citations, the mark in its last cell."""
    row = MARKER_RUN.sub("", report[statement.start : statement.end]).rstrip()
    return f"{row[:-1].rstrip()}{mark} |" if row.endswith("|") else row + mark


async def _rewrite(
    report: str,
    orphans: list[int],
    statements: list[CitedStatement],
    sources: dict[int, SourceEvidence],
    state: ResearchState,
    client: ModelClient,
    language: str,
) -> tuple[dict[int, str], list[CitationCheck], Usage]:
    """Rewrites of statements left without support, each checked like any citation.

    A rewrite keeps only the citations its check confirms. One that keeps none, cites a source
    its statement did not, or was not offered, is left out: its statement is then marked.
    """
    items = [
        (n, statements[i].text, [sources[s] for s in statements[i].source_ids])
        for n, i in enumerate(orphans, 1)
    ]
    limit = client.settings.max_context_tokens
    try:
        answer, usage = await ask(
            StatementRewrites,
            prompts.rewrite_statements(
                items,
                prompts.brief(state["question"], state.get("clarifications")),
                limit,
                language,
            ),
            role="writer",
            client=client,
        )
        offered = {r.statement: r.text.strip() for r in answer.rewrites}
    except StructuredOutputError as error:
        offered, usage = {}, error.usage
    candidates: dict[int, str] = {}
    claims: list[Claim] = []
    for n, index in enumerate(orphans, 1):
        text = clean_citations(offered.get(n, ""), list(sources.values()))[0]  # links to [n]
        cited = ids_in(text)
        if cited and set(cited) <= set(statements[index].source_ids) and strip_markers(text):
            original = report[statements[index].start : statements[index].end]
            candidates[index] = text = closed_like(original, text)
            claims += [(part.text, i) for part in cited_statements(text) for i in part.source_ids]
    checks, check_usage = await check_claims(claims, sources, client)
    checks = [check.model_copy(update={"rewrite": True}) for check in checks]
    holds = {(c.statement, c.source_id) for c in checks if c.verdict != "unsupported"}
    rewritten = {}
    for index, text in candidates.items():
        kept = _held_parts(text, holds)
        if kept:
            rewritten[index] = kept
    return rewritten, checks, usage + check_usage


def _held_parts(rewrite: str, holds: set[Claim]) -> str:
    """The rewrite with only the citations its check confirmed, its statements split as the
    report's are (so the export finds each one's check); a statement of it that kept none is
    left out. "" when none kept any."""
    for part in reversed(cited_statements(rewrite)):
        kept = [i for i in part.source_ids if (part.text, i) in holds]
        span = rewrite[part.start : part.end]
        held = rewrite_markers(span, lambda ids, kept=kept: [i for i in ids if i in kept])
        rewrite = rewrite[: part.start] + (held if kept else "") + rewrite[part.end :]
    return " ".join(rewrite.split(" ")).strip() if ids_in(rewrite) else ""


def _apply(
    report: str,
    statements: list[CitedStatement],
    keep: dict[int, list[int]],
    replacements: dict[int, str],
) -> str:
    """The report with failed citations removed and orphaned statements replaced, end first."""
    for index in sorted(range(len(statements)), key=lambda i: -statements[i].start):
        statement = statements[index]
        span = report[statement.start : statement.end]
        if index in replacements:
            new = replacements[index]
        else:
            kept = keep[index]
            new = MARKER_RUN.sub(lambda run, kept=kept: _kept_run(run, kept), span)
        report = report[: statement.start] + new + report[statement.end :]
    return report


def _kept_run(run, kept: list[int]) -> str:
    """A run of markers like ` [2][1]` with only the kept ids (nothing when none is kept)."""
    ids = [i for i in ids_in(run.group(2)) if i in kept]
    return run.group(1) + markers(ids) if ids else ""


def _without_stray_markers(report: str) -> str:
    """The report without markers outside any statement (in a heading, or alone on a line).

    Such a marker cites nothing that could be checked, so it cannot stay. Code is left alone.
    """
    keep = [(s.start, s.end) for s in cited_statements(report)] + code_spans(report)
    stray = [
        m.span()
        for m in MARKER_RUN.finditer(report)
        if not any(start <= m.start() < end for start, end in keep)
    ]
    for start, end in reversed(stray):
        report = report[:start] + report[end:]
    return outside_code(report, lambda prose: re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", prose))


async def verify_citations(state: ResearchState, *, runs: LiveRuns) -> dict:
    """Check each cited statement against its sources; keep only the citations that hold."""
    registry = SourceRegistry(state["worker_results"])
    sources = {s.id: s for s in registry.sources}
    language = run_language(state["question"], state["settings"].language)
    words = words_for(language)
    report = _without_stray_markers(clean_citations(state["report"], registry.sources)[0])
    statements = cited_statements(report)
    client = runs.for_step(state).model_client()
    pairs = [(i, s) for i, st in enumerate(statements) for s in st.source_ids]
    ordered, usage = await check_claims(
        [(statements[i].text, s) for i, s in pairs], sources, client
    )
    checks = dict(zip(pairs, ordered, strict=True))
    keep = {
        i: [s for s in st.source_ids if checks[(i, s)].verdict != "unsupported"]
        for i, st in enumerate(statements)
    }
    orphans = [i for i, kept in keep.items() if not kept]
    unchecked = [
        i
        for i in orphans
        if all(checks[(i, s)].method == "fallback" for s in statements[i].source_ids)
    ]
    prose = [i for i in orphans if i not in unchecked and not statements[i].table_row]
    replacements, rewrite_checks, rewrite_usage = (
        await _rewrite(report, prose, statements, sources, state, client, language)
        if prose
        else ({}, [], Usage())
    )
    rewritten = len(replacements)
    for index in (i for i in orphans if i not in replacements):
        mark = words.unchecked if index in unchecked else words.unsupported
        statement = statements[index]
        replacements[index] = (
            _marked_row(report, statement, mark) if statement.table_row else statement.text + mark
        )
    supported = sum(check.verdict == "supported" for check in ordered)
    precision = supported / len(ordered) if ordered else None
    emit(
        CitationsChecked(
            checked=len(ordered),
            supported=supported,
            precision=precision,
            removed=sum(c.verdict == "unsupported" for c in ordered),
            rewritten=rewritten,
            marked=len(orphans) - rewritten,
            by_method=dict(Counter(c.method for c in ordered)),
            rewrites_by_method=dict(Counter(c.method for c in rewrite_checks)),
        )
    )
    return {
        "report": _apply(report, statements, keep, replacements),
        "citations": ordered + rewrite_checks,
        "citation_precision": precision,
        "usage": usage + rewrite_usage,
    }
