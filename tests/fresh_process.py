"""Python code run in a fresh interpreter, for what only a new process shows (imports, the
garbage collector's settings): the lines it printed."""

from __future__ import annotations

import subprocess
import sys


def printed(code: str) -> list[str]:
    """The lines `code` printed, run by this interpreter in a new process (fails if it fails)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.splitlines()
