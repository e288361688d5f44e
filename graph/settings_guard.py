"""The settings every step of a graph reads: validated, and for remote callers within what the
operator allows, whatever the state holds.

A caller of LangGraph's server can put settings into a thread's state by more doors than the
first step sees: a second run's input, `threads.update_state` (also as if a step had written
them), then a resume. So the served graph applies `domain.caller_settings.for_remote_caller`
where settings are read, at every step and route, not once where a run starts.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

from deep_research.domain.caller_settings import for_remote_caller, operator_from_environment
from deep_research.settings import Settings, settings_from
from deep_research.tools.model_names import on_the_servers_endpoint

SettingsReader = Callable[[Any], Settings]
Route = TypeVar("Route", bound=Callable[..., Any])


def as_the_server_allows(asked: Any) -> Settings:
    """Settings a remote caller put in state, as the operator (the server's environment)
    allows them: server-only settings at the server's values."""
    operator = operator_from_environment(os.environ)
    return for_remote_caller(asked, operator, model_allowed=on_the_servers_endpoint)[0]


def validated(asked: Any) -> Settings:
    """Settings in state as their type (a dict written by `update_state` is validated)."""
    return settings_from(asked)


def reader_for(remote_callers: bool) -> SettingsReader:
    """How a graph's steps read the settings in state: guarded for remote callers."""
    return as_the_server_allows if remote_callers else validated


def with_settings(state: Any, read: SettingsReader) -> Any:
    """`state` with its settings as `read` gives them (a state without settings as it is)."""
    if isinstance(state, dict) and state.get("settings") is not None:
        return {**state, "settings": read(state["settings"])}
    return state


def reading_settings(route: Route, read: SettingsReader) -> Route:
    """A route that sees the settings as `read` gives them (its typed answer kept for drawing)."""

    @functools.wraps(route)
    def routed(state: Any) -> Any:
        return route(with_settings(state, read))

    return routed  # type: ignore[return-value]
