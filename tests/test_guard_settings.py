"""A setting that switches a security guard off comes only from the person running (issue 20, 11).

Not from a `./deep-research.toml` found in the current folder, not from a LangGraph API caller's
settings; and the progress says when it is on.
"""

from __future__ import annotations

import argparse
import asyncio
import os

import pytest

import deep_research.nodes.planning as planning
from deep_research.domain.caller_settings import for_remote_caller, operator_from_environment
from deep_research.service.bad_input import BadInput
from deep_research.service.event_lines import describe
from deep_research.service.setting_sources import add_setting_flags, resolve_settings
from deep_research.settings import Settings
from deep_research.state import SubTask, TaskPlan, Usage
from deep_research.tools.events import GuardLowered
from deep_research.tools.run_resources import LiveRuns


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_setting_flags(parser)
    return parser.parse_args(argv)


def test_a_toml_found_in_the_current_folder_cannot_switch_the_guard_off(tmp_path):
    (tmp_path / "deep-research.toml").write_text("fetch_private_addresses = true\n")
    with pytest.raises(BadInput, match=r"fetch_private_addresses in .*security guard"):
        resolve_settings(parsed(), environ={}, cwd=tmp_path)


def test_the_person_running_can_still_switch_it_on(tmp_path):
    own = tmp_path / "deep-research.toml"
    own.write_text("fetch_private_addresses = true\n")
    named = resolve_settings(parsed("--config", str(own)), environ={}, cwd=tmp_path)
    assert named.settings.fetch_private_addresses
    (tmp_path / "elsewhere").mkdir()
    variable = {"DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES": "true"}
    assert resolve_settings(
        parsed(), environ=variable, cwd=tmp_path / "elsewhere"
    ).settings.fetch_private_addresses
    overridden = parsed("--set", "fetch_private_addresses=true")
    assert resolve_settings(
        overridden, environ={}, cwd=tmp_path / "elsewhere"
    ).settings.fetch_private_addresses


def test_other_settings_in_a_local_toml_still_apply(tmp_path):
    (tmp_path / "deep-research.toml").write_text("max_workers = 3\n")
    assert resolve_settings(parsed(), environ={}, cwd=tmp_path).settings.max_workers == 3


def restored(asked: Settings | dict, environ: dict[str, str]) -> tuple[Settings, list[str]]:
    """What a caller of the served graph runs with, on a server with `environ`."""
    return for_remote_caller(asked, operator_from_environment(environ))


def test_a_remote_caller_cannot_switch_the_guard_off():
    asked = Settings(fetch_private_addresses=True)
    kept, refused = restored(asked, {})
    assert not kept.fetch_private_addresses and refused == ["fetch_private_addresses"]
    allowed, none = restored(asked, {"DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES": "true"})
    assert allowed.fetch_private_addresses and none == []


def test_a_remote_caller_names_no_command_to_start_and_no_folder_to_read(tmp_path):
    """An MCP config starts commands and a corpus folder is read on the server: a caller of the
    LangGraph API sets neither; the server's environment does."""
    hostile = tmp_path / "evil.json"
    hostile.write_text('{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch pwned"]}}}')
    asked = {"mcp_config": str(hostile), "corpus_dir": "/etc"}
    kept, refused = restored(asked, {})
    assert (kept.mcp_config, kept.corpus_dir) == (None, None)
    assert refused == ["corpus_dir", "mcp_config"]
    server = {"DEEP_RESEARCH_CORPUS_DIR": str(tmp_path)}
    ours, _ = restored(asked, server)
    assert ours.corpus_dir == str(tmp_path) and ours.mcp_config is None
    assert ours.search_backend == "local"  # the operator's folder is what a run searches


def test_a_toml_found_in_the_current_folder_cannot_start_mcp_servers(tmp_path):
    (tmp_path / "deep-research.toml").write_text('mcp_config = "servers.json"\n')
    with pytest.raises(BadInput, match=r"mcp_config in .*security guard"):
        resolve_settings(parsed(), environ={}, cwd=tmp_path)


def test_the_served_graph_keeps_the_guard_and_says_so(monkeypatch):
    import json
    from pathlib import Path

    from deep_research.graph.research import graph, served

    assert served.builder.nodes["decompose"].runnable.name == "decompose_for_remote_callers"
    assert graph.builder.nodes["decompose"].runnable.name == "decompose"
    config = json.loads((Path(__file__).parents[1] / "langgraph.json").read_text())
    assert config["graphs"]["deep_research"]["path"] == "./graph/research.py:served"
    events = []
    plan = TaskPlan(
        query_type="straightforward",
        recommended_worker_count=1,
        subtasks=[SubTask(id=1, description="d", search_queries=["d"], complexity="simple")],
    )

    async def ask(*args, **kwargs):
        return plan, Usage()

    async def fitted(settings, windows, gates, roles=()):
        return settings, None

    monkeypatch.setattr(planning, "ask", ask)
    monkeypatch.setattr(planning, "fitted_to_server", fitted)
    monkeypatch.setattr(planning, "emit", lambda event: events.append(event.event))
    monkeypatch.delenv("DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES", raising=False)
    asked = {"fetch_private_addresses": True, "mcp_config": "/tmp/evil.json", "language": "en"}
    state = {"question": "q?", "settings": asked}
    remote = asyncio.run(planning.decompose_for_remote_callers(state, runs=LiveRuns()))
    assert not remote["settings"].fetch_private_addresses and "guard_kept" in events
    assert remote["settings"].mcp_config is None
    events.clear()
    local = asyncio.run(planning.decompose(state, runs=LiveRuns()))
    assert local["settings"].fetch_private_addresses and "guard_lowered" in events
    assert local["settings"].mcp_config == "/tmp/evil.json"  # the person running it chose it


def test_progress_says_when_the_guard_is_off():
    line = describe(GuardLowered(setting="fetch_private_addresses"))
    assert line and "fetch_private_addresses is on" in line


def test_a_dotenv_found_in_the_current_folder_cannot_switch_the_guard_off(
    tmp_path, monkeypatch, capsys
):
    from deep_research.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES", raising=False)
    (tmp_path / ".env").write_text("DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES=true\n")
    assert main(["config"]) == 2
    error = capsys.readouterr().err
    assert "DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES in" in error and "security guard" in error
    assert "DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES" not in os.environ  # nothing was loaded


def test_the_persons_own_environment_may_still_switch_it_on_beside_a_dotenv(
    tmp_path, monkeypatch, capsys
):
    from deep_research.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES", "true")
    (tmp_path / ".env").write_text("DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES=true\n")
    assert main(["config"]) == 0
    assert "fetch_private_addresses" in capsys.readouterr().out
