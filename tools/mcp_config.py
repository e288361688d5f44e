"""MCP servers as sources: the `mcpServers` JSON that desktop clients use, with an allow-list.

```json
{"mcpServers": {
  "wiki": {"command": "python", "args": ["wiki.py"], "env": {}, "allowedTools": ["search"]},
  "tickets": {"url": "http://127.0.0.1:9000/mcp", "allowedTools": ["find_tickets"]}}}
```

A stdio entry has `command` (with `args`, `env`, `cwd`), an HTTP one `url`. Only the tools in
`allowedTools` are ever called; a server without one contributes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

MAX_CONFIG_BYTES = 1_000_000


class McpConfigError(ValueError):
    """The MCP sources file cannot be used: missing, not JSON, or not the expected shape."""


class McpServerEntry(BaseModel):
    """One server of the file: how to reach it and which of its tools a run may call."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    allowed_tools: list[str] = Field(default_factory=list, alias="allowedTools")
    startup_timeout: float = Field(30.0, gt=0, le=600, alias="startupTimeout")
    """Seconds for the server to start and list its tools (an `npx` server's first start
    downloads its package); past it, the server is a failed source and is stopped."""

    @model_validator(mode="after")
    def _one_way_in(self) -> McpServerEntry:
        if bool(self.command) == bool(self.url):
            raise ValueError("give either command (stdio) or url (streamable HTTP)")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must be http(s), not {self.url!r}")
        return self


class McpSources(BaseModel):
    """The whole file: servers by name (other keys a client keeps there are ignored)."""

    model_config = ConfigDict(extra="ignore")

    servers: dict[str, McpServerEntry] = Field(alias="mcpServers")


def read_mcp_config(path: str | Path) -> McpSources:
    """The file's servers, or McpConfigError naming the file and what is wrong."""
    file = Path(path).expanduser()
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise McpConfigError(f"mcp_config {file}: {error.strerror or error}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise McpConfigError(f"mcp_config {file}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return McpSources.model_validate(json.loads(raw))
    except json.JSONDecodeError as error:
        raise McpConfigError(f"mcp_config {file}: not JSON ({error})") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise McpConfigError(f"mcp_config {file}: {where}: {message}") from None
