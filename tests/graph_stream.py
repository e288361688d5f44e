"""Run the real graph in this process and keep what it streamed: its last state and its
progress events, in order (what the CLI and the web app read, without either)."""

from __future__ import annotations

from deep_research.graph import graph
from deep_research.tools.events import parse_event


async def streamed_run(question: str, settings: dict, config: dict | None = None, app=graph):
    """The run's last top-level state and its progress events."""
    events, values = [], {}
    async for namespace, mode, chunk in app.astream(
        {"question": question},
        config,
        context=settings,
        stream_mode=["custom", "values"],
        subgraphs=True,
    ):
        if mode == "custom":
            events.append(parse_event(chunk))
        elif not namespace:
            values = chunk
    return values, events
