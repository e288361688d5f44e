"""Count module-level mutable state in the project's own modules (not tests, not bench).

A module-level name counts as *state* when the code changes it after import: a function
declares it `global`, or mutates it in place (item assignment or deletion, or a call of
setdefault/append/clear/pop/update/add/discard/set/remove/extend/insert on it). Constant tables
(a dict literal that is only read) are not state. Prints each one and the total.

    python bench/count_module_state.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cli", "domain", "evaluation", "graph", "nodes", "tools")
MUTATORS = {
    "setdefault", "append", "clear", "pop", "update", "add", "discard", "set", "remove",
    "extend", "insert", "popitem",
}  # fmt: skip


def module_files() -> list[Path]:
    files = [ROOT / "settings.py", ROOT / "state.py"]
    for package in PACKAGES:
        files += sorted((ROOT / package).rglob("*.py"))
    return files


def module_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def changed_names(tree: ast.Module, names: set[str]) -> set[str]:
    found = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                found |= set(node.names) & names
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if not isinstance(node, ast.AugAssign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                        found |= {target.value.id} & names
                    if isinstance(target, ast.Name) and isinstance(node, ast.AugAssign):
                        pass
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
                and isinstance(node.func.value, ast.Name)
            ):
                found |= {node.func.value.id} & names
    return found


def main() -> int:
    total = 0
    for path in module_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in sorted(changed_names(tree, module_names(tree))):
            print(f"{path.relative_to(ROOT)}: {name}")
            total += 1
    print(f"module-level names changed at run time: {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
