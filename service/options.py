"""What a calling agent may choose for one research run: a typed subset of `Settings`.

Models, endpoints and prices stay the server's: a caller picks how much work a run may do,
its language and where it searches, never which server or key it spends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from deep_research.domain import caller_settings
from deep_research.domain.language import LanguageCode
from deep_research.service.setting_sources import FLAGS
from deep_research.settings import (
    ReportLength,
    SearchBackendName,
    Settings,
    TimeRange,
    domain_name,
)

SPANS = ("day", "week", "month", "year")
"""Time ranges, narrowest first: a caller may narrow the server's, never widen it."""


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
        max_length=4096,
        description="Folder of documents for local/hybrid search; must be the server's "
        "corpus folder or inside it.",
    )
    include_domains: list[str] | None = Field(
        None,
        max_length=50,
        description="Only sources on these domains (and their subdomains), e.g. ['nature.com'].",
    )
    exclude_domains: list[str] | None = Field(
        None, max_length=50, description="Sources on these domains (and subdomains) are dropped."
    )
    time_range: TimeRange | None = Field(
        None, description="Only sources from the last day, week, month or year (where known)."
    )
    report_length: ReportLength | None = Field(
        None, description="How long the report is: brief, standard or long."
    )

    @field_validator("include_domains", "exclude_domains", mode="before")
    @classmethod
    def _domains(cls, value: object) -> object:
        """Domains as people write them, a list or one text separated by commas or lines: each a
        bare host name, a bad one refused here with its field named (before any paid call)."""
        if isinstance(value, str):
            value = value.replace("\n", ",").split(",")
        if not isinstance(value, list):
            return value
        return [domain_name(str(item)) for item in value if str(item).strip()] or None

    @field_validator("corpus_dir")
    @classmethod
    def _a_path_not_control_characters(cls, value: str | None) -> str | None:
        """A folder name with a NUL or another control character is no folder: refused here,
        with its field named, rather than failing deep in the file system."""
        if value is not None and any(ord(char) < 32 or ord(char) == 127 for char in value):
            raise ValueError("a folder name has no control characters (NUL, newline, ...)")
        return value

    def overrides(self) -> dict[str, Any]:
        """The settings the caller gave, by their `Settings` names."""
        return self.model_dump(exclude_none=True)


def _flag(name: str) -> str:
    """How the server's operator sets a setting: its flag, else `--set NAME=...`."""
    return next((flag.option for flag in FLAGS if flag.field == name), f"--set {name}=...")


CEILINGS = {
    name: _flag(name)
    for name in ResearchOptions.model_fields
    if name in caller_settings.CEILINGS  # the one list of the settings that bound a run's cost
}
"""The server's settings a caller may lower but never raise (those of `ResearchOptions` that
bound a run's cost), with the flag that sets each."""


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
    try:
        path = (root / asked).resolve()
    except (OSError, ValueError) as error:  # a name the file system refuses is no folder
        raise CorpusOutside(
            f"corpus_dir: {asked!r} is not a usable folder name ({error})"
        ) from None
    if path != root and root not in path.parents:
        raise CorpusOutside(f"corpus_dir: {asked!r} is not inside the server's corpus folder")
    return str(path)


def over_a_ceiling(server: Settings, asked: Settings, given: set[str]) -> str | None:
    """Why a caller's run would do more than the server allows, or None when it stays within.

    The server's values (its flags, else its defaults) are ceilings: a caller may narrow them,
    never widen them, directly or through a setting that moves another (`min_iterations`).
    """
    for name, flag in CEILINGS.items():
        ceiling, value = getattr(server, name), getattr(asked, name)
        if ceiling is None or (value is not None and value <= ceiling):
            continue
        shown = "unlimited" if value is None else value
        via = f"options.{name} {shown}" if name in given else f"options raise {name} to {shown}"
        return f"{via} is above this server's ceiling {ceiling} ({flag}); ask for {ceiling} or less"
    return _wider_sources(server, asked)


def _covered(domain: str, domains: list[str]) -> bool:
    """True when `domain` is one of `domains` or a subdomain of one."""
    return any(domain == d or domain.endswith("." + d) for d in domains)


def _wider_sources(server: Settings, asked: Settings) -> str | None:
    """Why a caller's source filters would let in sources the server's own filters keep out, or
    None: the operator's include list, exclude list and time range are ceilings too."""
    outside = [d for d in asked.include_domains if not _covered(d, server.include_domains)]
    if server.include_domains and (outside or not asked.include_domains):
        shown = ", ".join(outside) or "(none: every domain)"
        return (
            f"include_domains {shown} is outside this server's include_domains "
            f"{', '.join(server.include_domains)} (--include-domains); name those or subdomains"
        )
    dropped = [d for d in server.exclude_domains if not _covered(d, asked.exclude_domains)]
    if dropped:
        return (
            f"exclude_domains drops this server's {', '.join(dropped)} (--exclude-domains); "
            "keep them in the list"
        )
    if server.time_range and (
        asked.time_range is None or SPANS.index(asked.time_range) > SPANS.index(server.time_range)
    ):
        return (
            f"time_range {asked.time_range or 'any'} is wider than this server's "
            f"{server.time_range} (--time-range); ask for {server.time_range} or narrower"
        )
    return None


def within_server(server: Settings, inherited: Settings) -> Settings:
    """Settings a caller inherits rather than asks for (a follow-up's parent's, a resumed
    run's own), brought within the server's: every cost bound above the server's lowered to
    it (`domain.caller_settings.CEILINGS`, all of them), and source filters narrowed to the
    server's. Validated as a whole."""
    values = inherited.model_dump()
    for name in caller_settings.CEILINGS:
        ceiling, value = getattr(server, name), values[name]
        if ceiling is not None and (value is None or value > ceiling):
            values[name] = ceiling
    values["min_iterations"] = min(values["min_iterations"], values["max_iterations"])
    if server.include_domains:
        kept = [d for d in inherited.include_domains if _covered(d, server.include_domains)]
        values["include_domains"] = kept or list(server.include_domains)
    values["exclude_domains"] = sorted({*inherited.exclude_domains, *server.exclude_domains})
    if server.time_range and (
        inherited.time_range is None
        or SPANS.index(inherited.time_range) > SPANS.index(server.time_range)
    ):
        values["time_range"] = server.time_range
    return Settings.model_validate(values)
