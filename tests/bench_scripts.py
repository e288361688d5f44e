"""A `bench/` script loaded as a module, so that a test can run what it measures."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_script(name: str) -> ModuleType:
    """`bench/NAME.py`, loaded (its `main` is not run)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
