"""Checks that run before any model call, so bad input costs nothing and says what is wrong."""

from __future__ import annotations

from typing import Protocol

import httpx
from pydantic import ValidationError

from nodes.planning import BadQuestion, clean_question
from settings import Settings
from tools.corpus import CorpusError
from tools.local_search import open_corpus
from tools.models import MissingCredentials, openai_api_key
from tools.search import SearchProviderError
from tools.search.factory import check_provider, web_provider
from tools.secrets import redact


class Notes(Protocol):
    """Where a check reports what it did."""

    def note(self, text: str) -> None: ...


class BadInput(ValueError):
    """Input that cannot start a run; the message is one sentence that names the cause."""


def settings_or_explain(values: dict) -> Settings:
    """Validated settings, or BadInput naming the field and the rule it breaks."""
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "settings"
        message = first["msg"].removeprefix("Value error, ")
        raise BadInput(f"invalid setting {field}: {message}") from None


def check_question(question: str) -> str:
    """The cleaned question, or BadInput saying why it cannot be researched."""
    try:
        return clean_question(question)
    except BadQuestion as error:
        raise BadInput(str(error)) from None


def check_credentials(settings: Settings) -> None:
    """The keys the model server and search provider need are set; checked where that is free."""
    try:
        openai_api_key()
        check_provider(settings)
    except (MissingCredentials, SearchProviderError) as error:
        raise BadInput(redact(str(error))) from None
    except httpx.HTTPError as error:
        name = web_provider(settings)
        raise BadInput(
            redact(f"{name} is not reachable ({type(error).__name__}: {error})")
        ) from None


def check_corpus(settings: Settings, progress: Notes) -> None:
    """For local search: the folder exists and holds readable documents (indexing it now)."""
    if settings.search_backend not in ("local", "hybrid"):
        return
    try:
        stats = open_corpus(settings.corpus_dir or "").refresh()
    except CorpusError as error:
        raise BadInput(str(error)) from None
    progress.note(
        f"corpus: {stats.passages} passages from {settings.corpus_dir} "
        f"({stats.files_added} added, {stats.files_updated} updated, "
        f"{stats.files_skipped} skipped, {stats.seconds:.2f} s)"
    )
