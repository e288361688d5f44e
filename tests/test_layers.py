"""Imports point down the layers only:
cli, evaluation, server, web → graph → nodes → tools, export → domain → state → settings.

Every top-level module and package the project installs is in `LAYERS`, so a new one cannot
slip past the check; `settings.py` and `state.py` are the bottom and import no project module
above them.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "deep_research"  # the one name the project installs; the repository root is it
LAYERS = [  # lowest first; a module may import its own layer and the ones before it
    {"settings"},
    {"state"},
    {"domain"},
    {"tools", "export"},
    {"nodes"},
    {"graph"},
    {"service"},  # the run service: every door's runs
    {"cli", "evaluation", "server", "web"},  # the MCP server, the web app and their commands
]
PROJECT = set().union(*LAYERS)
ABOVE = {
    name: set().union(*LAYERS[index + 1 :]) for index, layer in enumerate(LAYERS) for name in layer
}
ABOVE["evaluation"] = {"cli", "server", "web"}  # the eval command is in the CLI; never the reverse
ABOVE["export"] = {"tools"}  # rendering a finished report needs no outside world


def _part(module: str) -> str:
    """The project part a module path names (`deep_research.tools.x` -> `tools`), or the top
    package of anything else (`langgraph.types` -> `langgraph`)."""
    parts = module.split(".")
    return parts[1] if parts[0] == PACKAGE and len(parts) > 1 else parts[0]


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
    return names


def files_of(name: str) -> list[Path]:
    """The source files of a top-level module or package."""
    module = ROOT / f"{name}.py"
    return [module] if module.exists() else sorted((ROOT / name).rglob("*.py"))


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


@pytest.mark.parametrize("name", sorted(PROJECT))
def test_no_module_imports_a_layer_above_it(name):
    files = files_of(name)
    assert files, f"{name} has no source"
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & ABOVE[name]) for path in files
    }
    assert {path: names for path, names in wrong.items() if names} == {}


def test_the_domain_does_no_io():
    io = {"httpx", "openai", "langchain_openai", "sqlite3", "aiosqlite", "socket", "tavily"}
    used = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & io)
        for path in [*files_of("domain"), *files_of("state"), *files_of("settings")]
    }
    assert {path: names for path, names in used.items() if names} == {}
