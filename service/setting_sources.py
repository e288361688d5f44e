"""Settings from flags, `--set`, the environment and a TOML file, and where each value came from.

One precedence for every setting: a flag beats `--set KEY=VALUE`, which beats the variable
`DEEP_RESEARCH_<KEY>`, which beats the config file (`--config FILE`, else `$DEEP_RESEARCH_CONFIG`,
else `./deep-research.toml` if present), which beats the default. A setting given nowhere adapts
to those that were (see `Settings`); errors name the flag, variable or file the user wrote.
`add_setting_flags` and `resolve_settings` are shared by every command that starts runs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import tomllib
import types
import typing
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from deep_research.service.bad_input import BadInput
from deep_research.settings import (
    LOWERS_A_GUARD,
    RENAMED_SETTINGS,
    SERVER_ONLY,
    Settings,
    renamed,
)

ENV_PREFIX = "DEEP_RESEARCH_"
CONFIG_VARIABLE = "DEEP_RESEARCH_CONFIG"
LOCAL_CONFIG = "deep-research.toml"
PATH_FIELDS = (
    "corpus_dir",
    "mcp_config",
)  # read relative to the working folder, or to the config file
DEFAULT = "default"
OTHER_VARIABLES = frozenset(  # the project's variables that are not settings
    ENV_PREFIX + name
    for name in (
        "CONFIG",
        "CHECKPOINT_DB",
        "DATA_DIR",
        "JUDGE_MODEL",
        "JUDGE_BASE_URL",
        "JUDGE_API_KEY",
        "ENDPOINT_MAX_CONCURRENT_MODEL_CALLS",
        "ENDPOINT_MODEL_CALLS_PER_MINUTE",
        "ENDPOINT_MODEL_TOKENS_PER_MINUTE",
        "ENDPOINT_MAX_CONCURRENT_SEARCHES",
        "ENDPOINT_SEARCHES_PER_MINUTE",
        "MAX_MODEL_CONCURRENCY",  # the old names of the five above, still read
        "MODEL_RPM",
        "MODEL_TPM",
        "MAX_SEARCH_CONCURRENCY",
        "SEARCH_RPM",
        "BENCH_DIR",
        "TEST_POSTGRES_URL",
        "REDIS_URL",  # endpoint limits shared through Redis (tools/endpoint_limits.py)
        "TEST_REDIS_URL",
        "REAL_MODEL",
        "REAL_MODEL_URL",
    )
)
ADAPTED = "default, adapted to the settings given"


@dataclass(frozen=True)
class Flag:
    """A setting with a flag of its own: the option, its field, and how argparse reads it."""

    option: str
    field: str
    switch: bool = False  # a flag without a value that sets the setting to `value`
    metavar: str | None = None
    value: bool = True  # what a switch sets (`--no-clarify`: false)


FLAGS: tuple[Flag, ...] = (
    Flag("--min-iterations", "min_iterations", metavar="N"),
    Flag("--max-iterations", "max_iterations", metavar="N"),
    Flag("--quality-threshold", "quality_threshold", metavar="SCORE"),
    Flag("--max-workers", "max_workers", metavar="N"),
    Flag("--model", "model", metavar="NAME"),
    Flag("--language", "language", metavar="CODE"),
    Flag("--search", "search_backend"),
    Flag("--corpus", "corpus_dir", metavar="DIR"),
    Flag("--mcp-config", "mcp_config", metavar="FILE"),
    Flag("--no-clarify", "clarify", switch=True, value=False),
    Flag("--approve-plan", "approve_plan", switch=True),
    Flag("--max-cost", "max_cost_usd", metavar="USD"),
    Flag("--max-tokens", "max_total_tokens", metavar="N"),
    Flag("--max-searches", "max_search_calls", metavar="N"),
    Flag("--fetch-pages", "fetch_pages", metavar="N"),
    Flag("--worker-tools", "worker_tools"),
    Flag("--max-pages", "max_pages", metavar="N"),
    Flag("--report-length", "report_length", metavar="brief|standard|long|WORDS"),
    Flag("--include-domains", "include_domains", metavar="DOMAIN,..."),
    Flag("--exclude-domains", "exclude_domains", metavar="DOMAIN,..."),
    Flag("--time-range", "time_range", metavar="day|week|month|year"),
    Flag("--local-model", "local_model", switch=True),
    Flag("--structured-output", "structured_output"),
)
PRICE_TABLE = "genai-prices"  # where a model's price came from when the user gave none
LOOPBACK_ORIGIN = "loopback OPENAI_BASE_URL"  # where an automatic local-model profile came from


@dataclass
class ResolvedSettings:
    """Validated settings, where each value came from, and the config file read (if any)."""

    settings: Settings
    origins: dict[str, str] = field(default_factory=dict)
    config_file: Path | None = None


def _dest(flag: Flag) -> str:
    """The argparse attribute that holds a setting flag's value."""
    return f"setting_{flag.field}"


def _choices(name: str) -> list[str] | None:
    """The allowed values of a `Literal` field, so argparse lists them in the help."""
    annotation = Settings.model_fields[name].annotation
    if typing.get_origin(annotation) is Literal:
        return [str(value) for value in typing.get_args(annotation)]
    return None


def add_setting_flags(parser: argparse.ArgumentParser, unattended: bool = False) -> None:
    """Add `--config`, `--set` and every setting flag to a (sub)command's parser; an
    `unattended` command (batch, eval) gets no `--approve-plan`, which it would refuse, nor
    `--no-clarify` (it never asks back)."""
    group = parser.add_argument_group("settings (flag > --set > environment > config file)")
    for flag in FLAGS:
        if unattended and flag.field in ("approve_plan", "clarify"):
            continue
        description = Settings.model_fields[flag.field].description or ""
        help_text = f"{description} (setting {flag.field})".replace("%", "%%")
        if flag.switch:
            group.add_argument(
                flag.option,
                dest=_dest(flag),
                action="store_const",
                const=flag.value,
                help=f"off: {help_text}" if not flag.value else help_text,
            )
        else:
            group.add_argument(
                flag.option,
                dest=_dest(flag),
                metavar=flag.metavar,
                choices=_choices(flag.field),
                help=help_text,
            )
    group.add_argument(
        "--set",
        dest="setting_overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any setting by name, repeatable; JSON for tables, e.g. "
        '--set prices=\'{"gpt-4.1-mini": {"input_per_million": 0.4, "output_per_million": 1.6}}\''
        " (`deep-research config` lists them all)",
    )
    group.add_argument(
        "--config",
        dest="config_file",
        type=Path,
        metavar="FILE",
        help=f"a TOML file of settings (default: ${CONFIG_VARIABLE}, else ./{LOCAL_CONFIG})",
    )


def add_server_only_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of what a command reads, fetches and starts (`settings.SERVER_ONLY`), for
    commands that run a stored run (`resume`, `ask`): a stored run's own are never used."""
    group = parser.add_argument_group(
        "what this command reads and starts (a stored run's own are not taken from the store)"
    )
    for flag in FLAGS:
        if flag.field not in SERVER_ONLY:
            continue
        help_text = f"setting {flag.field}, as `run` takes it"
        if flag.switch:
            group.add_argument(
                flag.option, dest=_dest(flag), action="store_const", const=True, help=help_text
            )
        else:
            group.add_argument(flag.option, dest=_dest(flag), metavar=flag.metavar, help=help_text)


def _accepts_text(annotation: Any) -> bool:
    """True when a field takes a string as is (str, an optional str, a Literal of strings)."""
    if annotation is str:
        return True
    if typing.get_origin(annotation) is Literal:
        return all(isinstance(value, str) for value in typing.get_args(annotation))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_accepts_text(arg) for arg in typing.get_args(annotation))
    return False


def _absolute(name: str, value: Any, base: Path) -> Any:
    """A path setting made absolute against `base`, so a resumed run finds the same folder."""
    if name in PATH_FIELDS and isinstance(value, str) and value:
        return str((base / Path(value).expanduser()).resolve())
    return value


def parse_value(name: str, text: str) -> Any:
    """A value written as text (a flag, `--set`, a variable), read by the field's type."""
    annotation = Settings.model_fields[name].annotation
    if _accepts_text(annotation):
        optional = type(None) in typing.get_args(annotation)
        return None if optional and text.strip().lower() in ("", "none", "null") else text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # pydantic reads "true", "yes", "3" by itself and names what is wrong


def _current_name(name: str, where: str) -> str:
    """The setting's name today: an old name is taken, with a warning naming the new one."""
    if name in RENAMED_SETTINGS:
        warnings.warn(renamed(name, where), FutureWarning, stacklevel=2)
        return RENAMED_SETTINGS[name]
    return name


def _unknown(name: str, where: str) -> BadInput:
    """The error for a name that is no setting, with the closest one as a hint."""
    close = difflib.get_close_matches(name, list(Settings.model_fields), n=1)
    hint = f" (did you mean {close[0]}?)" if close else "; `deep-research config` lists them"
    return BadInput(f"{where}: there is no setting named {name!r}{hint}")


def _from_overrides(pairs: list[str], cwd: Path) -> dict[str, tuple[Any, str]]:
    """The `--set KEY=VALUE` pairs, each read by its field's type."""
    values: dict[str, tuple[Any, str]] = {}
    for pair in pairs:
        given, equals, text = pair.partition("=")
        given = given.strip()
        if not equals:
            raise BadInput(f"--set {pair}: write it as KEY=VALUE, e.g. --set max_queries=3")
        name = _current_name(given, f"--set {given}")
        if name not in Settings.model_fields:
            raise _unknown(given, f"--set {pair}")
        values[name] = (_absolute(name, parse_value(name, text), cwd), f"--set {given}")
    return values


def _check_variable_names(environ: Mapping[str, str]) -> None:
    """A `DEEP_RESEARCH_` variable that names no setting but nearly names one is a typo: said,
    with the hint the config file gets, never ignored in silence. Other variables of the
    project (`OTHER_VARIABLES`) and names close to no setting are left alone."""
    settings = [ENV_PREFIX + name.upper() for name in [*Settings.model_fields, *RENAMED_SETTINGS]]
    for variable in sorted(environ):
        if not variable.startswith(ENV_PREFIX) or variable in settings:
            continue
        if variable in OTHER_VARIABLES or not environ[variable].strip():
            continue
        known = [*settings, *sorted(OTHER_VARIABLES)]
        close = difflib.get_close_matches(variable, known, n=1, cutoff=0.85)
        if close:
            raise BadInput(
                f"${variable}: there is no setting named "
                f"{variable.removeprefix(ENV_PREFIX).lower()!r} (did you mean ${close[0]}?)"
            )


def _from_environment(environ: Mapping[str, str], cwd: Path) -> dict[str, tuple[Any, str]]:
    """`DEEP_RESEARCH_<SETTING>` variables; an empty one counts as not set."""
    _check_variable_names(environ)
    values: dict[str, tuple[Any, str]] = {}
    for given in [*RENAMED_SETTINGS, *Settings.model_fields]:  # a current name wins over an old
        variable = ENV_PREFIX + given.upper()
        if environ.get(variable, "").strip():
            name = _current_name(given, f"${variable}")
            value = _absolute(name, parse_value(name, environ[variable]), cwd)
            values[name] = (value, f"${variable}")
    return values


def config_path(given: Path | None, environ: Mapping[str, str], cwd: Path) -> Path | None:
    """The config file to read: `--config`, else `$DEEP_RESEARCH_CONFIG`, else a local one."""
    if given is not None:
        return given.expanduser()
    if environ.get(CONFIG_VARIABLE):
        return Path(environ[CONFIG_VARIABLE]).expanduser()
    local = cwd / LOCAL_CONFIG
    return local if local.is_file() else None


def _named(args: argparse.Namespace, environ: Mapping[str, str]) -> bool:
    """Whether the user named the config file (`--config` or `$DEEP_RESEARCH_CONFIG`)."""
    return getattr(args, "config_file", None) is not None or bool(environ.get(CONFIG_VARIABLE))


def _from_file(path: Path | None, found_here: bool = False) -> dict[str, tuple[Any, str]]:
    """The settings in a TOML file; unknown keys and bad TOML are BadInput.

    A file `found_here` (the `./deep-research.toml` read because it lies in the current folder)
    may not switch a security guard off: whoever wrote it need not be the person running.
    """
    if path is None:
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BadInput(f"cannot read the config file {path}: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BadInput(f"the config file {path} is not valid TOML: {error}") from None
    values: dict[str, tuple[Any, str]] = {}
    for given, value in table.items():
        name = _current_name(given, f"{given} in {path}")
        if name not in Settings.model_fields:
            raise _unknown(given, str(path))
        if found_here and name in LOWERS_A_GUARD:
            raise _lowers_a_guard(name, path)
        values[name] = (_absolute(name, value, path.parent), f"{given} in {path}")
    return values


def _lowers_a_guard(name: str, path: Path) -> BadInput:
    """The refusal of a guard-lowering setting in a file found in the current folder."""
    return BadInput(
        f"{name} in {path}: a setting that switches a security guard off is not read from a "
        "file found in the current folder; give it as a flag, with --set, or in a file you name "
        "with --config"
    )


def load_local_dotenv(cwd: Path, environ: Mapping[str, str]) -> frozenset[str]:
    """Read `./.env` into the environment (what is set already wins); BadInput, loading nothing,
    when it would switch a security guard off (`LOWERS_A_GUARD`), as for a local TOML file.
    Returns the names it set, so that `config` can say a value came from `.env`."""
    from dotenv import dotenv_values, load_dotenv

    path = cwd / ".env"
    found = dotenv_values(path) if path.is_file() else {}
    for name in LOWERS_A_GUARD:
        variable = ENV_PREFIX + name.upper()
        if (found.get(variable) or "").strip() and variable not in environ:
            raise _lowers_a_guard(variable, path)
    loaded = frozenset(name for name, value in found.items() if value and name not in environ)
    load_dotenv(path, override=False)
    return loaded


def _from_flags(args: argparse.Namespace, cwd: Path) -> dict[str, tuple[Any, str]]:
    """The setting flags the user gave."""
    values: dict[str, tuple[Any, str]] = {}
    for flag in FLAGS:
        given = getattr(args, _dest(flag), None)
        if given is None:
            continue
        value = given if flag.switch else _absolute(flag.field, parse_value(flag.field, given), cwd)
        values[flag.field] = (value, flag.option)
    return values


def _explain(error: ValidationError, origins: dict[str, str]) -> BadInput:
    """The first validation error as one sentence, under the names the user wrote."""
    first = error.errors()[0]
    message = first["msg"].removeprefix("Value error, ")
    if first["loc"]:
        name, *inner = (str(part) for part in first["loc"])
        where = origins.get(name, name)
        if inner:  # inside a table such as prices
            where = f"{where} ({'.'.join(inner)})"
        elif where.startswith("--") and not where.startswith("--set"):
            where = f"{where} {first['input']}"
        return BadInput(f"{where}: {message[:1].lower()}{message[1:]}")
    return BadInput(_as_written(message, origins))


def _as_written(message: str, origins: dict[str, str]) -> str:
    """The message with each setting's name replaced by the flag, variable or file it came from.

    A setting the user did not give is named by its flag if it has one (that is how to fix it).
    Only names with an underscore are replaced: `model` is also an English word.
    """
    flags = {flag.field: flag.option for flag in FLAGS}
    names = {
        name: origins.get(name, DEFAULT) if origins.get(name, DEFAULT) != DEFAULT else flags[name]
        for name in Settings.model_fields
        if "_" in name and (origins.get(name, DEFAULT) != DEFAULT or name in flags)
    }
    for name in sorted(names, key=len, reverse=True):  # so no name is replaced inside another
        message = re.sub(rf"\b{name}\b", names[name], message)
    return message


def resolve_settings(
    args: argparse.Namespace,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> ResolvedSettings:
    """Settings from every source in precedence order, with origins; BadInput naming the source."""
    environ = os.environ if environ is None else environ
    cwd = cwd or Path.cwd()
    path = config_path(getattr(args, "config_file", None), environ, cwd)
    layers = [  # lowest first: each later layer wins
        _from_file(path, found_here=path == cwd / LOCAL_CONFIG and not _named(args, environ)),
        _from_environment(environ, cwd),
        _from_overrides(getattr(args, "setting_overrides", None) or [], cwd),
        _from_flags(args, cwd),
    ]
    merged: dict[str, tuple[Any, str]] = {}
    for layer in layers:
        merged.update(layer)
    from deep_research.tools.local_profile import (
        is_loopback,  # here: `--help` imports nothing heavy
    )
    from deep_research.tools.model_names import openai_base_url

    if "local_model" not in merged and is_loopback(openai_base_url()):
        merged["local_model"] = (True, LOOPBACK_ORIGIN)  # one slow server on this machine
    origins = {name: origin for name, (_, origin) in merged.items()}
    try:
        settings = Settings.model_validate({name: value for name, (value, _) in merged.items()})
    except ValidationError as error:
        raise _explain(error, origins) from None
    for name, info in Settings.model_fields.items():
        if name not in origins:
            default = info.get_default(call_default_factory=True)
            origins[name] = DEFAULT if getattr(settings, name) == default else ADAPTED
    if origins["prices"] == ADAPTED:  # filled from the price table for the models used
        origins["prices"] = PRICE_TABLE
    return ResolvedSettings(settings=settings, origins=origins, config_file=path)
