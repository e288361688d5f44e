"""Weighing the evidence before it is written: where sources disagree, which figure is current,
and what to set aside (another entity, off topic, superseded). A model pass over the numbered
quotes and snippets (`EvidenceWeighing`), in as few prompts as the context budget allows; its
answer is kept in run-wide terms (`domain.evidence.resolved`)."""

from __future__ import annotations

from deep_research.domain.context import estimate_tokens
from deep_research.domain.evidence import pool, resolved
from deep_research.domain.sources import SourceRegistry
from deep_research.nodes import prompts
from deep_research.state import (
    Disagreement,
    EvidenceWeighing,
    SetAside,
    Usage,
    WeighedEvidence,
)
from deep_research.tools.model_client import ModelClient
from deep_research.tools.structured import StructuredOutputError, ask


def _batches(blocks: list[str], room: int) -> list[list[str]]:
    """Blocks grouped in order so that each group fits in `room` tokens (a block too large for
    one prompt goes alone, and is clipped there)."""
    groups: list[list[str]] = [[]]
    used = 0
    for block in blocks:
        cost = estimate_tokens(block) + 2
        if groups[-1] and used + cost > room:
            groups.append([])
            used = 0
        groups[-1].append(block)
        used += cost
    return [group for group in groups if group]


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
    for batch in _batches(prompts.weigh_blocks(items, registry.sources), room):
        messages = prompts.weigh(question, batch, room, language=language)
        try:
            answer, cost = await ask(EvidenceWeighing, messages, role="writer", client=client)
        except StructuredOutputError as error:
            usage += error.usage
            continue
        usage += cost
        disagreements += answer.disagreements
        set_aside += answer.set_aside
    found = EvidenceWeighing(disagreements=disagreements, set_aside=set_aside)
    return resolved(found, items), usage
