"""What a calling agent may choose for one research run: a typed subset of `Settings`.

Models, endpoints and prices stay the server's: a caller picks how much work a run may do,
its language and where it searches, never which server or key it spends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deep_research.domain.language import LanguageCode
from deep_research.settings import SearchBackendName


class ResearchOptions(BaseModel):
    """The settings a caller may set for one run; unset ones keep the server's own."""

    model_config = ConfigDict(extra="forbid")

    max_iterations: int | None = Field(
        None, ge=1, le=20, description="Research rounds at most (1: no gap-filling round)."
    )
    min_iterations: int | None = Field(
        None, ge=1, le=20, description="Rounds before a good enough score may stop the run."
    )
    quality_threshold: float | None = Field(
        None, ge=0, le=100, description="Review score (0-100) that is good enough to stop."
    )
    max_workers: int | None = Field(None, ge=1, le=64, description="Subtasks researched at once.")
    max_total_tokens: int | None = Field(
        None, ge=1, description="Budget: model tokens (input + output) for the whole run."
    )
    max_search_calls: int | None = Field(
        None, ge=1, description="Budget: searches sent for the whole run."
    )
    language: LanguageCode | None = Field(
        None, description="Language of the report (e.g. en, de, zh-Hans); unset: the question's."
    )
    search_backend: SearchBackendName | None = Field(
        None,
        description="Where to search: a web provider, 'local' (the corpus folder) or 'hybrid'.",
    )
    corpus_dir: str | None = Field(
        None,
        description="Folder of documents for local/hybrid search; must be the server's "
        "corpus folder or inside it.",
    )

    def overrides(self) -> dict[str, Any]:
        """The settings the caller gave, by their `Settings` names."""
        return self.model_dump(exclude_none=True)


class CorpusOutside(ValueError):
    """A caller named a corpus folder outside the one the server was given."""


def corpus_inside(asked: str | None, server_root: str | None) -> str | None:
    """A caller's corpus folder (relative ones from the server's), refused outside the server's
    own: a caller must not make the server read any file it can reach."""
    if asked is None:
        return None
    if server_root is None:
        raise CorpusOutside(
            "corpus_dir: this server has no corpus folder (start it with --corpus DIR)"
        )
    root = Path(server_root).resolve()
    path = (root / asked).resolve()
    if path != root and root not in path.parents:
        raise CorpusOutside(f"corpus_dir: {asked!r} is not inside the server's corpus folder")
    return str(path)
