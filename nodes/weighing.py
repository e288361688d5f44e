"""Weighing the evidence before it is written: where sources disagree, which figure is current,
and what to set aside (another entity, off topic, superseded). A model pass over the numbered
quotes and snippets (`EvidenceWeighing`), in as few prompts as the context budget allows; its
answer is kept in run-wide terms (`domain.evidence.resolved`)."""

from __future__ import annotations

import re

from deep_research.domain.context import estimate_tokens
from deep_research.domain.evidence import pool, related_order, resolved
from deep_research.domain.sources import SourceRegistry
from deep_research.nodes import prompts
from deep_research.state import (
    Disagreement,
    EvidenceWeighing,
    Quote,
    SetAside,
    SourceEvidence,
    Usage,
    WeighedEvidence,
)
from deep_research.tools.events import ReplyDegenerate, emit
from deep_research.tools.model_client import ModelClient
from deep_research.tools.structured import StructuredOutputError, ask


def _batches(items: list[Quote], sources: list[SourceEvidence], room: int) -> list[list[str]]:
    """The pool as prompt-sized groups of blocks: all of it when it fits one prompt; else the
    items in related order (`domain.evidence.related_order`), cut where a prompt is full, so
    that rival figures are most likely weighed in the same prompt."""
    whole = prompts.weigh_blocks(items, sources)
    if sum(estimate_tokens(block) + 2 for block in whole) <= room:
        return [whole]
    groups: list[list[int]] = [[]]
    used = 0
    for index in related_order(items):
        cost = estimate_tokens(items[index].text) + 8
        if groups[-1] and used + cost > room * 0.8:  # source lines repeat in every group
            groups.append([])
            used = 0
        groups[-1].append(index)
        used += cost
    return [
        prompts.weigh_blocks([items[i] for i in group], sources, [i + 1 for i in group])
        for group in groups
    ]


MOST_SET_ASIDE = 0.5  # a weighing that sets aside more than this share of its items is not trusted


def trusted_set_aside(set_aside: list[SetAside], batch: list[str]) -> list[SetAside]:
    """The items a weighing sets aside, unless it sets aside most of the evidence it was shown:
    a weak model's answer that looks valid (Gemma 3 270M set aside all three items of a test
    pool as "another entity") would leave the writer nothing, so those are all kept."""
    shown = len(re.findall(r"^#\d+: ", "\n".join(batch), re.M))
    named = {entry.item for entry in set_aside}
    if shown and len(named) > MOST_SET_ASIDE * shown:
        problem = f"the weighing set aside {len(named)} of {shown} evidence items; none is"
        emit(ReplyDegenerate(role="writer", problem=problem, final=True))
        return []
    return set_aside


async def weigh(
    question: str, language: str, client: ModelClient, registry: SourceRegistry
) -> tuple[WeighedEvidence, Usage]:
    """The weighing of the run's whole evidence pool. A batch whose reply stays invalid weighs
    nothing (its evidence is written as it is); nothing to weigh costs no call."""
    items = pool(registry)
    if not items:
        return WeighedEvidence(), Usage()
    room = prompts.weigh_room(client.settings.max_context_tokens)
    disagreements: list[Disagreement] = []
    set_aside: list[SetAside] = []
    usage = Usage()
    for batch in _batches(items, registry.sources, room):
        messages = prompts.weigh(question, batch, room, language=language)
        try:
            answer, cost = await ask(EvidenceWeighing, messages, role="writer", client=client)
        except StructuredOutputError as error:
            usage += error.usage
            continue
        usage += cost
        disagreements += answer.disagreements
        set_aside += trusted_set_aside(answer.set_aside, batch)
    found = EvidenceWeighing(disagreements=disagreements, set_aside=set_aside)
    return resolved(found, items), usage
