"""`BadInput`: input that cannot start a run, found before any paid call (exit code 2)."""

from __future__ import annotations


class BadInput(ValueError):
    """Input that cannot start a run; the message is one sentence that names the cause."""
