"""Progress events: what each step reports on the graph's custom stream.

The CLI's progress view, Studio and LangGraph SDK clients all read the same events
(`stream_mode="custom"`); each is a small JSON object with an `event` name.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer


def emit(event: str, **data: Any) -> None:
    """Send one progress event to whoever streams the run (nobody, outside a graph run)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # a step called directly, not by a graph: there is no stream
        return
    writer({"event": event, **data})
