"""`deep-research mcp` in the test's own process: the command's own code from argv to the MCP
server it builds (flags, checks, settings, store, resumed runs, tools), with the SDK's in-memory
transport in place of stdio, so a test of what the server answers starts no process.

The tests of the process itself (stdio, HTTP, a kill, the installed entry point) start one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from deep_research.cli.main import main

T = TypeVar("T")


def served(store: str, scenario: Callable[[Client], Awaitable[T]], *flags: str) -> T:
    """Run `deep-research mcp FLAGS --checkpoint-db STORE` here, hand `scenario` an MCP client
    of the server it serves, and return what the scenario returned once the command ended."""
    answers: list[T] = []

    async def serve_the_scenario(server: MCPServer) -> None:
        async with Client(server, mode="legacy") as client:  # stdio's own request loop
            answers.append(await scenario(client))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MCPServer, "run_stdio_async", serve_the_scenario)
        code = main(["mcp", *flags, "--checkpoint-db", store])
    assert code == 0, f"deep-research mcp {' '.join(flags)} exited {code}"
    assert answers, "the command never served"
    return answers[0]
