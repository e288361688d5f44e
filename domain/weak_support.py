"""The cheap citation check of every review round: cited statements whose sources hardly state
them, handed to gap analysis as claims needing evidence.

Word overlap cannot confirm a citation (that is the final verification's job, with the model)
but a statement whose cited sources, in its own script, hold little of its content (its
numbers above all) is worth another search before the end. Statements in another script than
all their sources are left to the final check. Pure Python, no I/O.
"""

from __future__ import annotations

from deep_research.domain.distinct import distinct
from deep_research.domain.language import script_of
from deep_research.domain.lexical import support_score
from deep_research.domain.statements import cited_statements
from deep_research.state import SourceEvidence

WEAK_SUPPORT = 0.35  # below this share of its content in every cited source: needs evidence
MAX_CLAIMS = 12  # claims handed on per round, in report order


def needing_evidence(report: str, sources: list[SourceEvidence]) -> list[str]:
    """The report's cited statements that no cited source (in the statement's script) seems to
    state, or that cite no registered source; at most `MAX_CLAIMS`, each once."""
    by_id = {source.id: source for source in sources}
    scripts = {source.id: script_of(source.excerpt) for source in sources}  # once per source
    flagged = []
    for statement in cited_statements(report):
        cited = [by_id[i] for i in statement.source_ids if i in by_id]
        script = script_of(statement.text)
        same = [s for s in cited if scripts[s.id] == script]
        if cited and not same:
            continue
        if not cited or max(support_score(statement.text, s.excerpt) for s in same) < WEAK_SUPPORT:
            flagged.append(" ".join(statement.text.split()))
    return distinct(flagged, limit=MAX_CLAIMS)
