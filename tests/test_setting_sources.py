"""Settings sources in-process: values read by type, paths made absolute, empty variables unset."""

from __future__ import annotations

import argparse

import pytest

from deep_research.service.bad_input import BadInput
from deep_research.service.setting_sources import add_setting_flags, parse_value, resolve_settings


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_setting_flags(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("max_queries", "3", 3),
        ("max_queries", "null", None),
        ("verify_citations", "false", False),
        ("verify_citations", "no", "no"),  # left to pydantic, which reads it as False
        ("model", "123", "123"),  # a string field keeps digits as text
        ("planner_model", "", None),
        ("prices", '{"m": {"input_per_million": 1, "output_per_million": 2}}', {
            "m": {"input_per_million": 1, "output_per_million": 2}}),
    ],
)  # fmt: skip
def test_values_are_read_by_the_fields_type(name, text, value):
    assert parse_value(name, text) == value


def test_a_folder_is_read_relative_to_where_it_was_written(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "r.toml").write_text("search_backend = 'local'\ncorpus_dir = 'docs'\n")
    resolved = resolve_settings(parsed("--config", str(tmp_path / "conf" / "r.toml")), {}, tmp_path)
    assert resolved.settings.corpus_dir == str(tmp_path / "conf" / "docs")
    resolved = resolve_settings(parsed("--set", "corpus_dir=docs"), {}, tmp_path)
    assert resolved.settings.corpus_dir == str(tmp_path / "docs")


def test_an_empty_variable_counts_as_unset(tmp_path):
    resolved = resolve_settings(parsed(), {"DEEP_RESEARCH_MODEL": " "}, tmp_path)
    assert resolved.origins["model"] == "default"
    resolved = resolve_settings(parsed(), {"DEEP_RESEARCH_MAX_WORKERS": "3"}, tmp_path)
    assert resolved.settings.max_workers == 3
    assert resolved.origins["max_workers"] == "$DEEP_RESEARCH_MAX_WORKERS"


def test_the_config_file_found_in_order(tmp_path):
    (tmp_path / "deep-research.toml").write_text("max_workers = 2\n")
    (tmp_path / "other.toml").write_text("max_workers = 3\n")
    assert resolve_settings(parsed(), {}, tmp_path).settings.max_workers == 2
    environ = {"DEEP_RESEARCH_CONFIG": str(tmp_path / "other.toml")}
    assert resolve_settings(parsed(), environ, tmp_path).settings.max_workers == 3
    with pytest.raises(BadInput, match="cannot read the config file"):
        resolve_settings(parsed("--config", str(tmp_path / "none.toml")), environ, tmp_path)


def test_an_unknown_key_in_the_file_is_named(tmp_path):
    (tmp_path / "deep-research.toml").write_text("[prices]\nm = 1\nmax_worker = 2\n")
    with pytest.raises(BadInput, match=r"prices in .* \(m\): input should be"):
        resolve_settings(parsed(), {}, tmp_path)
    (tmp_path / "deep-research.toml").write_text("max_worker = 2\n")
    with pytest.raises(BadInput, match=r"no setting named 'max_worker' \(did you mean max_workers"):
        resolve_settings(parsed(), {}, tmp_path)


@pytest.mark.parametrize(
    ("argv", "environ", "toml", "origin"),
    [
        (["--set", "request_timeout=30"], {}, "", "--set request_timeout"),
        ([], {"DEEP_RESEARCH_REQUEST_TIMEOUT": "30"}, "", "$DEEP_RESEARCH_REQUEST_TIMEOUT"),
        ([], {}, "request_timeout = 30\n", "request_timeout in "),
    ],
)
def test_the_old_name_of_a_setting_still_works_and_says_the_new_one(
    tmp_path, argv, environ, toml, origin
):
    if toml:
        (tmp_path / "deep-research.toml").write_text(toml)
    with pytest.warns(FutureWarning, match="write search_timeout, the setting's new name"):
        resolved = resolve_settings(parsed(*argv), environ, tmp_path)
    assert resolved.settings.search_timeout == 30
    assert resolved.origins["search_timeout"].startswith(origin)


def test_the_old_name_from_python_too_and_never_both():
    from deep_research.settings import Settings

    with pytest.warns(FutureWarning, match="request_timeout: write search_timeout"):
        assert Settings(request_timeout=7).search_timeout == 7
    with pytest.raises(ValueError, match="give search_timeout only"):
        Settings(request_timeout=7, search_timeout=8)


def test_the_validators_say_what_they_check():
    from deep_research.settings import Settings

    checks = {
        name: validator.func.__doc__
        for name, validator in Settings.__pydantic_decorators__.model_validators.items()
    }
    assert set(checks) == {
        "_local_profile",
        "_old_names",
        "_iterations_in_order",
        "_every_model_priced",
        "_corpus_for_local_search",
    }
    with pytest.raises(ValueError, match="needs prices for every model"):
        Settings(max_cost_usd=1, model="a-model-no-table-lists")
    with pytest.raises(ValueError, match="needs corpus_dir"):
        Settings(search_backend="local")


def test_config_shows_the_limits_every_run_of_the_process_shares(tmp_path, monkeypatch):
    from deep_research.cli.config_view import config_lines

    for name in ("DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE", "DEEP_RESEARCH_MODEL_TPM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DEEP_RESEARCH_MODEL_RPM", "600")
    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_SEARCHES", "4")
    lines = config_lines(resolve_settings(parsed(), {}, tmp_path), str(tmp_path / "c.sqlite"))
    shown = {line.split()[0]: line.split()[1:] for line in lines if line.startswith("DEEP_")}
    assert shown["DEEP_RESEARCH_ENDPOINT_MODEL_CALLS_PER_MINUTE"] == [
        "600",
        "$DEEP_RESEARCH_MODEL_RPM",
        "(its",
        "old",
        "name)",
    ]
    assert shown["DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_SEARCHES"] == ["4", "environment"]
    assert shown["DEEP_RESEARCH_ENDPOINT_MODEL_TOKENS_PER_MINUTE"] == ["no", "limit", "default"]


def test_every_endpoint_limit_variable_is_known_to_the_typo_check():
    """A process-wide limit's variable (new name or old) is never taken for a mistyped setting."""
    from deep_research.service.setting_sources import OTHER_VARIABLES
    from deep_research.tools.endpoint_limits import VARIABLES

    assert {name for pair in VARIABLES.values() for name in pair} <= OTHER_VARIABLES
