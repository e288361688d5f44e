"""What a remote caller may set: every setting but the server's own, within the operator's ceilings.

One rule for every door through which someone other than the operator reaches the engine (the
graph LangGraph's server serves, the MCP server, the web app): `for_remote_caller`. What the
server reads, fetches and starts (`SERVER_ONLY`) is the operator's choice whatever the caller
sent; a limit the operator set (`CEILINGS`) is an upper bound a caller may only narrow. The
result is validated as a whole, like any settings, never patched in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import TypeAdapter

from deep_research.settings import ROLES, SERVER_ONLY, Settings

FOLDER_BACKENDS = ("local", "hybrid")
CEILINGS: tuple[str, ...] = (
    "max_workers",
    "max_subtasks",
    "max_iterations",
    "max_queries",
    "max_cycles",
    "max_results",
    "max_supplementary_tasks",
    "max_pages",
    "worker_max_rounds",
    "fetch_pages",
    "max_page_fetches",
    "page_max_bytes",
    "page_timeout",
    "search_timeout",
    "model_call_timeout",
    "request_idle_timeout",
    "planner_max_tokens",
    "researcher_max_tokens",
    "writer_max_tokens",
    "reviewer_max_tokens",
    "structured_retries",
    "model_retries",
    "search_retries",
    "max_concurrent_model_calls",
    "max_concurrent_searches",
    "max_total_tokens",
    "max_search_calls",
    "max_cost_usd",
    "max_context_tokens",
)
"""Settings that bound what a run costs: when the operator sets one, a caller may ask for less,
never more (None, no limit, counts as more than any number). The one list: the MCP server's
ceilings (`service.options.CEILINGS`) are those of its options that are on it."""


PRICES = TypeAdapter(Settings.model_fields["prices"].annotation)
"""Model prices as settings hold them (a caller's and the operator's compared alike)."""

MODEL_SETTINGS = ("model", *(f"{role}_model" for role in ROLES))
"""The settings that name a model (and so the provider, address and key a call goes to)."""


class CallerRefused(ValueError):
    """A remote caller asked for something the operator does not allow; names the setting."""


def operator_from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """The server-only settings as the server's environment sets them (`DEEP_RESEARCH_<NAME>`),
    else their defaults: what LangGraph's server runs with whatever its callers send."""
    values = {}
    for name in SERVER_ONLY:
        field = Settings.model_fields[name]
        text = environ.get(f"DEEP_RESEARCH_{name.upper()}", "").strip()
        values[name] = (
            TypeAdapter(field.annotation).validate_python(text)
            if text
            else field.get_default(call_default_factory=True)
        )
    return values


def given_values(asked: Settings | Mapping[str, Any] | None) -> dict[str, Any]:
    """What a caller actually set: the fields it gave (defaults are filled in again later)."""
    if asked is None:
        return {}
    if isinstance(asked, Settings):
        return asked.model_dump(include=asked.model_fields_set)
    if not isinstance(asked, Mapping):
        raise CallerRefused(f"settings must be an object, not {type(asked).__name__}")
    return dict(asked)


def _above(asked: Any, ceiling: Any) -> bool:
    """Whether a caller's value is wider than the operator's (None: no limit at all)."""
    if ceiling is None:
        return False
    return asked is None or asked > ceiling


def for_remote_caller(
    asked: Settings | Mapping[str, Any] | None,
    operator: Mapping[str, Any],
    *,
    ceilings: Mapping[str, Any] | None = None,
    model_allowed: Callable[[str], bool] | None = None,
    prices: Mapping[str, Any] | None = None,
) -> tuple[Settings, list[str]]:
    """The settings a remote caller's run uses, and the server-only names it asked for in vain.

    `operator` holds the server's value of every `SERVER_ONLY` setting (see
    `operator_from_environment`): those are taken whatever the caller sent. A search backend
    that reads a folder reads the operator's (refused when there is none); a web backend reads
    none; a caller that names no backend gets the operator's folder when there is one.
    `ceilings` (names in `CEILINGS`, the operator's values) are upper bounds: an unset one
    takes the operator's value, a wider one is refused with `CallerRefused` naming it.
    `model_allowed` says which model names a caller may give (e.g. only on the server's own
    provider, `tools.model_names.on_the_servers_endpoint`); None: any. `prices` are the
    operator's model prices, taken whatever the caller sent; a `max_cost_usd` ceiling needs
    them (a caller's own prices, at zero, would make any run cost nothing).
    """
    given = given_values(asked)
    dropped = sorted(
        name for name in SERVER_ONLY if name in given and given[name] != operator[name]
    )
    if prices is not None:
        priced = PRICES.validate_python(prices)
        if "prices" in given and PRICES.validate_python(given["prices"]) != priced:
            dropped = sorted([*dropped, "prices"])
        given["prices"] = priced
    elif "max_cost_usd" in (ceilings or {}):
        raise ValueError("a max_cost_usd ceiling needs the operator's prices (`prices=`)")
    values = {name: value for name, value in given.items() if name not in SERVER_ONLY}
    values.update({name: operator[name] for name in SERVER_ONLY if name != "corpus_dir"})
    backend = values.get("search_backend")
    folder = operator["corpus_dir"]
    if backend in FOLDER_BACKENDS and not folder:
        raise CallerRefused(
            f"search_backend {backend}: this server names no corpus folder to search "
            "(only its operator can, e.g. DEEP_RESEARCH_CORPUS_DIR)"
        )
    if folder and (backend is None or backend in FOLDER_BACKENDS):
        values["corpus_dir"] = folder
    for name in MODEL_SETTINGS:
        model = values.get(name)
        if model_allowed is not None and isinstance(model, str) and not model_allowed(model):
            raise CallerRefused(
                f"{name} {model!r}: a caller may name models of this server's own provider only"
            )
    for name, ceiling in (ceilings or {}).items():
        if name not in CEILINGS:
            raise ValueError(f"{name} is not a setting that bounds a run's cost")
        if name not in values:
            values[name] = ceiling
        elif _above(values[name], ceiling):
            raise CallerRefused(f"{name} {values[name]} is above this server's limit {ceiling}")
    return Settings.model_validate(values), dropped
