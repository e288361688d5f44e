"""Citation verification: every cited statement checked against the text its source returned.

A lexical check settles the clear cases; the reviewer model judges the rest in batches that fit
the context budget. Unsupported citations are removed; a statement left with no support is
rewritten by the writer from the evidence it does have, or marked as unsupported.
"""

from __future__ import annotations

import re

from nodes import prompts
from nodes.events import emit
from state import (
    CitationCheck,
    PairVerdicts,
    ResearchState,
    SourceEvidence,
    StatementRewrites,
    Usage,
)
from tools.citations import clean_citations, is_cjk
from tools.context import estimate_tokens
from tools.lexical import (
    CitedStatement,
    best_quote,
    cited_statements,
    lexical_verdict,
    support_score,
)
from tools.run_resources import RunResources, resources_for
from tools.sources import SourceRegistry
from tools.structured import StructuredOutputError, ask

FALLBACK_PARTIAL_AT = 0.45  # lexical score that keeps a citation the model could not judge
Pair = tuple[int, int]  # (statement index, source id)


def _lexical(statements: list[CitedStatement], sources: dict[int, SourceEvidence]):
    """Verdicts the lexical check settles, and the pairs it leaves to the model."""
    checks: dict[Pair, CitationCheck] = {}
    undecided: list[Pair] = []
    for index, statement in enumerate(statements):
        for source_id in statement.source_ids:
            excerpt = sources[source_id].excerpt
            verdict = lexical_verdict(statement.text, excerpt)
            if verdict is None:
                undecided.append((index, source_id))
                continue
            quote = best_quote(statement.text, excerpt) if verdict == "supported" else ""
            checks[(index, source_id)] = CitationCheck(
                statement=statement.text, source_id=source_id, verdict=verdict, evidence=quote
            )
    return checks, undecided


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


def _fallback(statement: str, source_id: int, excerpt: str) -> CitationCheck:
    """A pair the model could not judge: kept as partial only if the words mostly match."""
    partial = support_score(statement, excerpt) >= FALLBACK_PARTIAL_AT
    return CitationCheck(
        statement=statement,
        source_id=source_id,
        verdict="partial" if partial else "unsupported",
        evidence=best_quote(statement, excerpt) if partial else "",
        method="fallback",
    )


async def _judge(
    pairs: list[Pair],
    statements: list[CitedStatement],
    sources: dict[int, SourceEvidence],
    run: RunResources,
) -> tuple[dict[Pair, CitationCheck], Usage]:
    """The model's verdicts on the undecided pairs, batch by batch."""
    room = prompts.verify_room(run.settings.max_context_tokens)
    blocks = [
        prompts.pair_block(n, statements[i].text, sources[s], room)
        for n, (i, s) in enumerate(pairs, 1)
    ]
    checks: dict[Pair, CitationCheck] = {}
    usage = Usage()
    for group in _batches(blocks, room):
        try:
            answer, cost = await ask(
                PairVerdicts,
                prompts.verify_pairs([blocks[g] for g in group]),
                role="reviewer",
                run=run,
            )
            verdicts = {v.pair: v for v in answer.verdicts}
        except StructuredOutputError as error:
            cost, verdicts = error.usage, {}
        usage += cost
        for g in group:
            index, source_id = pairs[g]
            text, excerpt = statements[index].text, sources[source_id].excerpt
            found = verdicts.get(g + 1)
            checks[pairs[g]] = (
                CitationCheck(
                    statement=text,
                    source_id=source_id,
                    verdict=found.verdict,
                    evidence=found.quote or best_quote(text, excerpt),
                    method="model",
                )
                if found
                else _fallback(text, source_id, excerpt)
            )
    return checks, usage


def _is_table_row(statement: CitedStatement, report: str) -> bool:
    """True for a statement that is a Markdown table row."""
    return report[statement.start : statement.end].lstrip().startswith("|")


def _marked_row(report: str, statement: CitedStatement, mark: str) -> str:
    """A table row without its citations, the mark in its last cell."""
    row = _MARKER_RUN.sub("", report[statement.start : statement.end]).rstrip()
    return f"{row[:-1].rstrip()}{mark} |" if row.endswith("|") else row + mark


def _unsupported_mark(question: str) -> str:
    return "（未经来源证实）" if is_cjk(question) else " *(not supported by the sources found)*"


async def _rewrite(
    orphans: list[int],
    statements: list[CitedStatement],
    sources: dict[int, SourceEvidence],
    state: ResearchState,
    run: RunResources,
) -> tuple[dict[int, str], Usage]:
    """New text for statements left without support: rewritten from their sources, or marked."""
    items = [
        (n, statements[i].text, [sources[s] for s in statements[i].source_ids])
        for n, i in enumerate(orphans, 1)
    ]
    limit = run.settings.max_context_tokens
    try:
        answer, usage = await ask(
            StatementRewrites,
            prompts.rewrite_statements(items, state["question"], limit),
            role="writer",
            run=run,
        )
        offered = {r.statement: r.text.strip() for r in answer.rewrites}
    except StructuredOutputError as error:
        offered, usage = {}, error.usage
    replacements = {}
    for n, index in enumerate(orphans, 1):
        statement = statements[index]
        text = offered.get(n, "")
        allowed = set(statement.source_ids)
        cited = {int(i) for i in re.findall(r"\[(\d+)\]", text)}
        plain = re.sub(r"\s*\[\d+\]", "", text)
        holds = (
            cited
            and cited <= allowed
            and all(lexical_verdict(plain, sources[i].excerpt) != "unsupported" for i in cited)
        )
        replacements[index] = (
            text if holds else statement.text + _unsupported_mark(state["question"])
        )
    return replacements, usage


_MARKER_RUN = re.compile(r"(\s*)((?:\[\d+\])+)")


def _kept_markers(run: re.Match, kept: list[int]) -> str:
    """A run of markers like ` [2][1]` with only the kept ids (nothing when none is kept)."""
    ids = [int(n) for n in re.findall(r"\d+", run.group(2)) if int(n) in kept]
    return run.group(1) + "".join(f"[{i}]" for i in ids) if ids else ""


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
            new = _MARKER_RUN.sub(lambda run, kept=keep[index]: _kept_markers(run, kept), span)
        report = report[: statement.start] + new + report[statement.end :]
    return report


async def verify_citations(state: ResearchState) -> dict:
    """Check each cited statement against its sources; keep only the citations that hold."""
    registry = SourceRegistry(state["worker_results"])
    sources = {s.id: s for s in registry.sources}
    report, _ = clean_citations(state["report"], registry.sources)
    statements = cited_statements(report)
    run = resources_for(state["run_id"], state["settings"])
    checks, undecided = _lexical(statements, sources)
    judged, usage = (
        await _judge(undecided, statements, sources, run) if undecided else ({}, Usage())
    )
    checks.update(judged)
    keep = {
        i: [s for s in st.source_ids if checks[(i, s)].verdict != "unsupported"]
        for i, st in enumerate(statements)
    }
    orphans = [i for i, kept in keep.items() if not kept]
    prose = [i for i in orphans if not _is_table_row(statements[i], report)]
    replacements, rewrite_usage = (
        await _rewrite(prose, statements, sources, state, run) if prose else ({}, Usage())
    )
    mark = _unsupported_mark(state["question"])
    for index in set(orphans) - set(prose):  # a table row keeps its cells: marked, not rewritten
        replacements[index] = _marked_row(report, statements[index], mark)
    ordered = [checks[(i, s)] for i, st in enumerate(statements) for s in st.source_ids]
    supported = sum(check.verdict == "supported" for check in ordered)
    precision = supported / len(ordered) if ordered else None
    emit(
        "citations",
        checked=len(ordered),
        supported=supported,
        precision=precision,
        removed=sum(c.verdict == "unsupported" for c in ordered),
        rewritten=len(orphans),
    )
    return {
        "report": _apply(report, statements, keep, replacements),
        "citations": ordered,
        "citation_precision": precision,
        "usage": usage + rewrite_usage,
    }
