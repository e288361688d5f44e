"""A worker's toolbox: the tools its model may call, as OpenAI function specs and as prompt text.

The same specs serve both tool-calling protocols (the reference article's two layers): passed
natively (`bind_tools`), or written into the prompt, where the model answers with
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks that `parse_tool_calls` reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache

from pydantic import BaseModel, Field, ValidationError

from deep_research.domain.control_chars import without_any_controls
from deep_research.domain.json_reply import strip_reasoning
from deep_research.state import ToolCall

WEB_SEARCH, READ_PAGE, SEARCH_DOCUMENTS, FINISH = (
    "web_search",
    "read_page",
    "search_documents",
    "finish",
)
_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S)


class WebSearchArgs(BaseModel):
    """Search the web with one or more queries (sent at once)."""

    queries: list[str] = Field(min_length=1, description="Search queries, each self-contained.")


class ReadPageArgs(BaseModel):
    """Read a whole page and keep word-for-word quotes from it: the URL of a search hit, or a
    link found in a page already read."""

    url: str = Field(min_length=1, description="The page's URL, exactly as it was listed.")


class SearchDocumentsArgs(BaseModel):
    """Search the user's own documents."""

    query: str = Field(min_length=1, description="What to look for.")


class FinishArgs(BaseModel):
    """Stop researching: the evidence gathered answers the subtask (or nothing more can)."""

    reason: str = Field("", description="Why the evidence suffices, in a sentence.")


ARGUMENTS: dict[str, type[BaseModel]] = {
    WEB_SEARCH: WebSearchArgs,
    READ_PAGE: ReadPageArgs,
    SEARCH_DOCUMENTS: SearchDocumentsArgs,
    FINISH: FinishArgs,
}


@dataclass(frozen=True)
class Tool:
    """One tool as the model sees it: name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    parameters: dict

    def spec(self) -> dict:
        """The OpenAI function-tool spec (what `bind_tools` sends)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@cache
def _tool(name: str) -> Tool:
    """A built-in tool from its arguments model: the model's docstring is its description
    (built once per tool: pydantic takes milliseconds to build a schema, and every decide
    offers its tools)."""
    model = ARGUMENTS[name]
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    return Tool(name, (model.__doc__ or "").strip(), schema)


MCP_NAME = re.compile(r"[^A-Za-z0-9_-]+")


MAX_SCHEMA_CHARS = 8000  # an MCP tool's argument schema, as JSON, at most (it joins every prompt)


def schema_fits(schema: dict) -> bool:
    """True when an MCP tool's argument schema is small enough to send with every decide call
    (a server's list of tools may be megabytes; the prompt's budget is not)."""
    return len(json.dumps(schema or {}, ensure_ascii=False)) <= MAX_SCHEMA_CHARS


def mcp_tool(server: str, tool: str, description: str, schema: dict) -> Tool:
    """An allowed MCP tool as the model sees it: `mcp_SERVER_TOOL`, with its own schema; its
    description (the server's words) bounded and without control characters."""
    name = MCP_NAME.sub("_", f"mcp_{server}_{tool}")[:64]
    said = without_any_controls(f"{description} (the MCP server {server}, tool {tool})")
    what = " ".join(said.split())[:500]
    return Tool(name, what, schema or {"type": "object", "properties": {}})


def _fits_schema(args: dict, schema: dict) -> bool:
    """True when the arguments are valid by the tool's JSON schema (jsonschema comes with the
    MCP SDK, which any MCP tool needs). A `$ref` outside the schema is never retrieved (an empty
    registry: jsonschema's default fetches it with urllib, file:// included, unguarded): such a
    schema fits no arguments."""
    from jsonschema import ValidationError as SchemaError
    from jsonschema.exceptions import SchemaError as BadSchema
    from jsonschema.validators import validator_for
    from referencing import Registry
    from referencing.exceptions import Unresolvable

    try:
        validator = validator_for(schema)
        validator.check_schema(schema)
        validator(schema, registry=Registry()).validate(args)
    except (SchemaError, BadSchema, Unresolvable):
        return False
    return True


@dataclass(frozen=True)
class Toolbox:
    """The tools one decide step offers (only those with budget left); `mcp` maps an MCP tool's
    name as offered to its (server, tool)."""

    tools: list[Tool] = field(default_factory=list)
    mcp: dict[str, tuple[str, str]] = field(default_factory=dict)

    def schema(self, name: str) -> dict:
        """The JSON schema of one offered tool's arguments."""
        return next(tool.parameters for tool in self.tools if tool.name == name)

    @property
    def names(self) -> list[str]:
        """The tools' names, in the order offered."""
        return [tool.name for tool in self.tools]

    def specs(self) -> list[dict]:
        """Every tool as an OpenAI function spec."""
        return [tool.spec() for tool in self.tools]

    def prompt_text(self) -> str:
        """The tool list and the reply format, written into the prompt (the prompt protocol)."""
        lines = [
            "You can call these tools. Each takes JSON arguments matching its schema:",
            "",
        ]
        for tool in self.tools:
            schema = json.dumps(tool.parameters, ensure_ascii=False)
            lines.append(f"- {tool.name}: {tool.description}\n  arguments schema: {schema}")
        lines += [
            "",
            "To call tools, answer with one block per call (several calls at once are fine), "
            "and nothing else:",
            '<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>',
            f"Call {FINISH} when the evidence answers the subtask.",
        ]
        return "\n".join(lines)


def toolbox(
    *, search: bool, pages: bool, documents: bool, mcp: list[tuple[str, str, str, dict]] = ()
) -> Toolbox:
    """The tools a worker may still use: the built-ins with budget left, the allowed MCP tools
    (`mcp`: server, tool, description, schema), and finish, always offered."""
    wanted = [(WEB_SEARCH, search), (READ_PAGE, pages), (SEARCH_DOCUMENTS, documents)]
    tools = [_tool(name) for name, offered in wanted if offered]
    named = {}
    for server, tool, description, schema in mcp:
        if not schema_fits(schema):  # never offered: it would crowd the evidence out
            continue
        spec = mcp_tool(server, tool, description, schema)
        if spec.name not in named and spec.name not in ARGUMENTS:
            named[spec.name] = (server, tool)
            tools.append(spec)
    return Toolbox([*tools, _tool(FINISH)], named)


def checked_call(call_id: str, name: str, args: object, box: Toolbox) -> ToolCall | None:
    """A call to an offered tool whose arguments fit its schema (built-ins validated by their
    model); None for anything else (an unknown tool, arguments that are not an object)."""
    if name not in box.names or not isinstance(args, dict):
        return None
    model = ARGUMENTS.get(name)
    if model is not None:
        try:
            args = model.model_validate(args).model_dump()
        except ValidationError:
            return None
    elif not _fits_schema(args, box.schema(name)):
        return None
    return ToolCall(id=call_id, name=name, args=args)


def _json_object(text: str) -> dict | None:
    """The JSON object a block holds (fenced or bare, from its first `{` to its last `}`)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):  # invalid, or nested too deep for json.loads
        return None
    return value if isinstance(value, dict) else None


def parse_tool_calls(text: str, box: Toolbox, prefix: str = "call") -> list[ToolCall]:
    """The usable tool calls of a prompt-protocol reply: each `<tool_call>` block (or, with no
    tags at all, the reply itself) holding `{"name", "arguments"}` for an offered tool with
    valid arguments; anything else is ignored."""
    body = strip_reasoning(text or "")
    blocks = _TAGGED.findall(body) or [body]
    calls = []
    for number, block in enumerate(blocks, 1):
        value = _json_object(block)
        if value is None:
            continue
        args = value.get("arguments", value.get("args", value.get("parameters", {})))
        if isinstance(args, str):  # some models send the arguments as a JSON string
            try:
                args = json.loads(args)
            except (ValueError, RecursionError):
                continue
        call = checked_call(f"{prefix}_{number}", str(value.get("name", "")), args, box)
        if call is not None:
            calls.append(call)
    return calls
