"""`deep-research config`: every effective setting, where it came from, and the environment.

Secrets are masked: key variables show only whether they are set, URLs lose their passwords.
"""

from __future__ import annotations

import json
import os

from deep_research.service.setting_sources import ResolvedSettings
from deep_research.tools.checkpoints import CHECKPOINT_DB_VARIABLE
from deep_research.tools.secrets import SECRET_VARIABLES, mask_url_passwords, redact

ENDPOINT_VARIABLES = (  # shown when set, with any password in them masked
    "TAVILY_API_BASE_URL",
    "BOCHA_API_BASE_URL",
    "SEARXNG_URL",
    "DUCKDUCKGO_BASE_URL",
    "DEEP_RESEARCH_JUDGE_BASE_URL",
)


def _shown(value: object) -> str:
    """A setting's value as text: strings as they are, the rest as JSON."""
    if value is None:
        return "unset"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _variable_origin(name: str, dotenv: frozenset[str], shown: str = "environment") -> str:
    """Where a variable's value came from: `.env` (read at start-up) or the environment."""
    if name not in dotenv:
        return shown
    return f"{shown} in .env" if shown.startswith("$") else ".env"


def _environment(target: str, dotenv: frozenset[str] = frozenset()) -> list[tuple[str, str, str]]:
    """(name, value, where from) for what a run takes from outside the settings; a value read
    from `./.env` says so."""
    from deep_research.service.preflight import model_endpoint

    base_name = "OPENAI_BASE_URL" if os.environ.get("OPENAI_BASE_URL") else "OPENAI_API_BASE"
    base_url = os.environ.get(base_name)
    rows = [
        (
            "model server",
            model_endpoint(),
            _variable_origin(base_name, dotenv, f"${base_name}") if base_url else "default",
        ),
        (
            "checkpoint store",
            mask_url_passwords(target),
            _variable_origin(CHECKPOINT_DB_VARIABLE, dotenv, f"${CHECKPOINT_DB_VARIABLE}")
            if os.environ.get(CHECKPOINT_DB_VARIABLE)
            else "default",
        ),
    ]
    for name in ENDPOINT_VARIABLES:
        if os.environ.get(name):
            rows.append(
                (name, mask_url_passwords(os.environ[name]), _variable_origin(name, dotenv))
            )
    rows += _process_limits(dotenv)
    for name in SECRET_VARIABLES:
        shown = "set (hidden)" if os.environ.get(name) else "not set"
        rows.append((name, shown, _variable_origin(name, dotenv)))
    return [(name, redact(value), origin) for name, value, origin in rows]


def _process_limits(dotenv: frozenset[str] = frozenset()) -> list[tuple[str, str, str]]:
    """(variable, value, where from) for each limit every run of the process shares."""
    from deep_research.tools.endpoint_limits import DEFAULT_CONCURRENCY, VARIABLES

    rows = []
    for name, old in VARIABLES.values():
        default = str(DEFAULT_CONCURRENCY) if "CONCURRENT" in name else "no limit"
        if os.environ.get(name, "").strip():
            rows.append((name, os.environ[name].strip(), _variable_origin(name, dotenv)))
        elif os.environ.get(old, "").strip():
            origin = _variable_origin(old, dotenv, f"${old}")
            rows.append((name, os.environ[old].strip(), f"{origin} (its old name)"))
        else:
            rows.append((name, default, "default"))
    redis = os.environ.get("DEEP_RESEARCH_REDIS_URL", "").strip()  # shared by every process
    rows.append(("DEEP_RESEARCH_REDIS_URL", redis or "not set (limits per process)", "environment"))
    return rows


def _setting_origin(origin: str, dotenv: frozenset[str]) -> str:
    """A setting's origin, with `in .env` when its variable was read from `./.env`."""
    variable = origin.removeprefix("$")
    return f"{origin} in .env" if origin.startswith("$") and variable in dotenv else origin


def _settings_rows(
    resolved: ResolvedSettings, dotenv: frozenset[str] = frozenset()
) -> list[tuple[str, str, str]]:
    """(name, value, where from) for every setting, secrets masked."""
    dumped = resolved.settings.model_dump(mode="json")
    return [
        (name, redact(_shown(dumped[name])), _setting_origin(resolved.origins[name], dotenv))
        for name in dumped
    ]


def config_lines(
    resolved: ResolvedSettings, target: str, dotenv: frozenset[str] = frozenset()
) -> list[str]:
    """The effective settings and the environment as aligned text columns."""
    rows = _settings_rows(resolved, dotenv)
    outside = _environment(target, dotenv)
    width = max(len(name) for name, _, _ in rows + outside)
    value_width = min(40, max(len(value) for _, value, _ in rows + outside))
    config = str(resolved.config_file) if resolved.config_file else "none"
    lines = [f"config file: {config}", "", f"{'setting':<{width}}  {'value':<{value_width}}  from"]
    lines += [f"{n:<{width}}  {v:<{value_width}}  {o}" for n, v, o in rows]
    lines += ["", f"{'outside the settings':<{width}}  {'value':<{value_width}}  from"]
    lines += [f"{n:<{width}}  {v:<{value_width}}  {o}" for n, v, o in outside]
    return lines


def config_json(
    resolved: ResolvedSettings, target: str, dotenv: frozenset[str] = frozenset()
) -> str:
    """The same as JSON: {"config_file", "settings": {name: {value, from}}, "environment"}."""
    dumped = resolved.settings.model_dump(mode="json")
    record = {
        "config_file": str(resolved.config_file) if resolved.config_file else None,
        "settings": {
            name: {
                "value": json.loads(redact(json.dumps(value))),
                "from": _setting_origin(resolved.origins[name], dotenv),
            }
            for name, value in dumped.items()
        },
        "environment": {
            name: {"value": v, "from": o} for name, v, o in _environment(target, dotenv)
        },
    }
    return json.dumps(record, ensure_ascii=False, indent=2)
