"""A stand-in MCP server (written with the SDK's MCPServer) that plays an internal wiki, on stdio.

Every tool call is appended to the `--log` file, so a test can tell which tools were called.
`--die-on-call` makes the process exit at its first tool call (a server that dies mid-run; a
call that came in beside it is never served);
`--answer-bytes N` pads every answer to N bytes (a server that answers too much);
`--same-page` answers every query with the same page (no echo of the query), and
`--page-url URL` names that page's address in its text, as a real wiki's answer does.

python tests/stand_ins/mcp_wiki.py --log /tmp/wiki-calls.log [--http-port 9000]
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from pathlib import Path

from mcp.server.mcpserver import MCPServer

FACTS = {
    "wiki": "The internal wiki says: our archive cluster compresses logs with zstd level 19.",
    "tickets": "Ticket OPS-812 says: xz was dropped from the backup job for being too slow.",
}


def build(
    log: Path,
    die_on_call: bool,
    name: str = "wiki",
    answer_bytes: int = 0,
    same_page: bool = False,
    page_url: str = "",
) -> MCPServer:
    server = MCPServer(name)
    dying = threading.Lock()  # the SDK runs each call of a plain function in its own thread

    def record(tool: str, argument: str) -> None:
        if die_on_call:  # the first call dies holding it: a call in flight beside it never starts
            dying.acquire()
        with log.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps({"tool": tool, "argument": argument}) + "\n")
        if die_on_call:
            os._exit(1)

    @server.tool()
    def search_wiki(query: str) -> str:
        """Search the internal wiki."""
        record("search_wiki", query)
        answer = FACTS[name] if same_page or page_url else f"{FACTS[name]} (asked: {query})"
        if page_url:
            answer += f"\n\nPage: {page_url} (last edited by ops)."
        return answer + "x" * max(0, answer_bytes - len(answer))

    @server.tool()
    def delete_page(title: str) -> str:
        """Delete a wiki page (never on the allow-list)."""
        record("delete_page", title)
        return "deleted"

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--die-on-call", action="store_true")
    parser.add_argument("--http-port", type=int, help="serve streamable HTTP on 127.0.0.1")
    parser.add_argument("--name", choices=sorted(FACTS), default="wiki")
    parser.add_argument("--answer-bytes", type=int, default=0)
    parser.add_argument("--same-page", action="store_true")
    parser.add_argument("--page-url", default="")
    args = parser.parse_args()
    server = build(
        args.log, args.die_on_call, args.name, args.answer_bytes, args.same_page, args.page_url
    )
    if args.http_port:
        server.run("streamable-http", host="127.0.0.1", port=args.http_port)
    else:
        server.run()
