"""Imports point down the layers only:
the launcher → the doors (the terminal, the MCP server, the web app; none imports another) →
evaluation → the run service → graph → nodes → tools, export → domain → state → settings.

Every top-level module and package the project installs is in `LAYERS`, so a new one cannot
slip past the check; `settings.py` and `state.py` are the bottom and import no project module
above them. The launcher (the `deep-research` command, which starts every door) lives in the
`cli` package beside the terminal's door: its modules are named in `LAUNCHER` and counted as a
part of their own.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "deep_research"  # the one name the project installs; the repository root is it
DOORS = ("cli", "server", "web")  # the terminal, the MCP server, the web app
LAYERS = [  # lowest first; a module may import its own layer and the ones before it
    {"settings"},
    {"state"},
    {"domain"},
    {"tools", "export"},
    {"nodes"},
    {"graph"},
    {"service"},  # the run service: every door's runs
    {"evaluation"},  # `eval`'s runs go through the service
    set(DOORS),  # each its own layer: a door imports no other door (below)
    {"launcher"},  # `deep-research`, which starts each door
]
LAUNCHER = {"__main__", "main", "parser", "serve_mcp", "serve_web", "worker", "redis_limits"}
"""The modules of `cli/` that are the launcher, not the terminal's door."""
PROJECT = set().union(*LAYERS) - {"launcher"}
ABOVE = {
    name: set().union(*LAYERS[index + 1 :]) for index, layer in enumerate(LAYERS) for name in layer
}
for door in DOORS:
    ABOVE[door] |= set(DOORS) - {door}
ABOVE["export"] = {"tools"}  # rendering a finished report needs no outside world


def _part(module: str) -> str:
    """The project part a module path names (`deep_research.tools.x` -> `tools`, a launcher
    module of `cli` -> `launcher`), or the top package of anything else (`langgraph`)."""
    parts = module.split(".")
    if parts[0] != PACKAGE or len(parts) < 2:
        return parts[0]
    if parts[1] == "cli" and len(parts) > 2 and parts[2] in LAUNCHER:
        return "launcher"
    return parts[1]


def imported_packages(path: Path) -> set[str]:
    """The parts and outside packages a module imports anywhere in its body."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {_part(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(_part(node.module))
            if node.module == PACKAGE:  # `from deep_research import settings`
                names |= {alias.name for alias in node.names}
            elif node.module == f"{PACKAGE}.cli":  # `from deep_research.cli import main`
                names |= {_part(f"{node.module}.{alias.name}") for alias in node.names}
    return names


def files_of(name: str) -> list[Path]:
    """The source files of a top-level module or package (the launcher's, of `cli`)."""
    if name == "launcher":
        return sorted(ROOT / "cli" / f"{module}.py" for module in LAUNCHER)
    module = ROOT / f"{name}.py"
    files = [module] if module.exists() else sorted((ROOT / name).rglob("*.py"))
    if name == "cli":
        files = [path for path in files if path.stem not in LAUNCHER]
    return files


def installed_packages() -> list[str]:
    """The packages pyproject.toml installs, all under the one `deep_research` name."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert tool["setuptools"]["package-dir"] == {PACKAGE: "."}
    return tool["setuptools"]["packages"]


def test_every_installed_part_has_a_layer():
    packages = installed_packages()
    assert all(p == PACKAGE or p.startswith(f"{PACKAGE}.") for p in packages)
    parts = {p.split(".")[1] for p in packages if p != PACKAGE}
    modules = {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
    assert parts | modules == PROJECT


def test_every_folder_with_code_is_installed():
    folders = {
        ".".join([PACKAGE, *init.parent.relative_to(ROOT).parts])
        for part in PROJECT
        for init in (ROOT / part).rglob("__init__.py")
    }
    assert folders | {PACKAGE} == set(installed_packages())


@pytest.mark.parametrize("name", sorted(PROJECT | {"launcher"}))
def test_no_module_imports_a_layer_above_it(name):
    files = files_of(name)
    assert files, f"{name} has no source"
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & ABOVE[name]) for path in files
    }
    assert {path: names for path, names in wrong.items() if names} == {}


def test_the_domain_does_no_io():
    io = {
        "httpx",
        "httpx2",
        "openai",
        "langchain_openai",
        "sqlite3",
        "aiosqlite",
        "socket",
        "tavily",
    }
    used = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & io)
        for path in [*files_of("domain"), *files_of("state"), *files_of("settings")]
    }
    assert {path: names for path, names in used.items() if names} == {}


def test_each_door_is_its_own_layer_above_the_service():
    for door in DOORS:
        assert ABOVE["service"] >= {door, "launcher", "evaluation"}
        assert ABOVE[door] == (set(DOORS) - {door}) | {"launcher"}
    assert all((ROOT / "cli" / f"{module}.py").exists() for module in LAUNCHER)
