"""Run the real graph in this process and keep what it streamed: its last state and its
progress events, in order (what the CLI and the web app read, without either)."""

from __future__ import annotations

from deep_research.graph import graph
from deep_research.tools.events import parse_event

TOOL_WORKER = {  # one round of workers whose model acts, reading pages on loopback
    "worker_tools": "auto",
    "fetch_private_addresses": True,  # the test sites are on loopback
    "max_iterations": 1,
    "min_iterations": 1,
    "model_retries": 0,
    "search_retries": 0,
}


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
