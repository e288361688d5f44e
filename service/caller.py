"""Who calls, through which door, and which runs that caller may see and act on.

Every run records its owner: the door it was started through and that door's user (a web user,
an MCP token's name, "" for a door's only user: the terminal's local user, an MCP server without
tokens, a web app without authentication). A caller sees and acts on the runs of its own door
and user; runs of other doors are invisible unless the operator says otherwise
(`other_doors`, e.g. `deep-research web --all-doors`), and even then another user's runs of a
door that tells its users apart stay theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Door = Literal["cli", "mcp", "web"]
DOORS: tuple[Door, ...] = ("cli", "mcp", "web")


@dataclass(frozen=True)
class Caller:
    """Who asks: a door and its user ("" for the door's only user)."""

    door: Door
    user: str = ""


@dataclass(frozen=True)
class Visibility:
    """Which runs a door's callers may see: their own, and other doors' when `other_doors`."""

    other_doors: bool = False

    def may_see(self, caller: Caller, door: str, owner: str) -> bool:
        """Whether `caller` may see and act on a run `owner` started through `door`."""
        if door == caller.door:
            return owner == caller.user
        return self.other_doors and (not owner or owner == caller.user or not caller.user)
