"""Imports point down the layers only: cli/evaluation → graph → nodes → tools → domain."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ABOVE = {  # the packages a layer must never import, lazily or not
    "domain": {"tools", "nodes", "graph", "cli", "evaluation"},
    "tools": {"nodes", "graph", "cli", "evaluation"},
    "nodes": {"graph", "cli", "evaluation"},
    "graph": {"cli", "evaluation"},
}


def imported_packages(path: Path) -> set[str]:
    """The top-level packages a module imports anywhere in its body."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_no_module_imports_a_layer_above_it(layer):
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & ABOVE[layer])
        for path in (ROOT / layer).rglob("*.py")
    }
    assert {path: names for path, names in wrong.items() if names} == {}


def test_the_domain_does_no_io():
    io = {"httpx", "openai", "langchain_openai", "sqlite3", "aiosqlite", "socket", "tavily"}
    used = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & io)
        for path in (ROOT / "domain").rglob("*.py")
    }
    assert {path: names for path, names in used.items() if names} == {}
