"""What an endpoint and model were found to accept, remembered for the process and across runs.

`auto` structured output settles a method per (base URL, model) by what works. The answer is
kept in memory for the process (`tools.process_wide`) and, when the CLI names a file (in the
data folder), on disk, so the next run starts with the method that worked instead of
rediscovering a refusal.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

from deep_research.tools.endpoint_limits import endpoint_id
from deep_research.tools.secrets import mask_url_passwords

METHODS = ("json_schema", "json_object", "tool_calling", "prompt")  # strongest first
TOOL_PROTOCOLS = ("native", "prompt")  # how a worker's model calls tools, strongest first


def endpoint_key(base_url: str | None, model: str) -> tuple[str, str]:
    """The memory key: the base URL as the SDK will use it (default OpenAI), any password in it
    masked (the key is written to disk), and the model name."""
    return (mask_url_passwords(endpoint_id(base_url)), model)


class CapabilityMemory:
    """Settled methods per (endpoint, model); the process holds one (`tools.process_wide`)."""

    def __init__(self, store: Path | None = None, methods: tuple[str, ...] = METHODS) -> None:
        self._methods = methods  # the ways this memory chooses between, strongest first
        self._lock = threading.Lock()
        self._settled: dict[tuple[str, str], str] = {}
        self._store: Path | None = None
        if store is not None:
            self.remember_on_disk(store)

    def remember_on_disk(self, path: Path | None) -> None:
        """Keep settled methods in `path` (a JSON file) from now on, starting from what it
        holds."""
        with self._lock:
            self._store = path
            if path is None or not path.exists():
                return
            try:
                rows = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return  # an unreadable memory only costs one rediscovery
            for row in rows if isinstance(rows, list) else []:
                if isinstance(row, dict) and row.get("method") in self._methods:
                    self._settled.setdefault(
                        endpoint_key(row.get("base_url"), row.get("model", "")), row["method"]
                    )

    def settled_method(self, base_url: str | None, model: str) -> str | None:
        """The method found to work for this endpoint and model, if one was settled."""
        with self._lock:
            return self._settled.get(endpoint_key(base_url, model))

    def settle(self, base_url: str | None, model: str, method: str) -> tuple[str, bool]:
        """Record that `method` is the strongest that works here (only ever down).

        Returns the method now settled and whether this call changed it.
        """
        key = endpoint_key(base_url, model)
        with self._lock:
            known = self._settled.get(key)
            if known is None or self._methods.index(method) > self._methods.index(known):
                self._settled[key] = method
                self._save()
                return method, True
            return known, False

    def _save(self) -> None:
        """Write the memory to its file atomically (caller holds the lock)."""
        if self._store is None:
            return
        rows = [
            {"base_url": b, "model": m, "method": meth}
            for (b, m), meth in sorted(self._settled.items())
        ]
        self._store.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self._store.parent, prefix=".capabilities-")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(rows, file, indent=1)
        os.replace(temporary, self._store)
