"""A model and a search service that echo the caller's key in a *successful* answer: the key
enters no state, checkpoint, report, export, event log or progress line (redaction where the
outside text enters: the model's reply, a search hit, a page, a tool's answer; not only errors).

Seen before: the OpenAI key 679 times in one checkpoint, and in every export, the web event log
and the terminal's progress. Driven through the terminal, where it was seen.
"""

from __future__ import annotations

import asyncio
import json

from conftest import SECRET_MODEL_KEY, SECRET_SEARCH_KEY

from deep_research.cli.main import main
from deep_research.tools.checkpoints import open_checkpointer

KEYS = (SECRET_MODEL_KEY, SECRET_SEARCH_KEY)


def echo_keys(chat_server, search_server) -> None:
    """The model puts its caller's key in its plan and its prose; the search service in every
    hit's title and text (as a proxy or a debugging server that reflects the request does)."""
    brain = chat_server.brain
    plan, prose = brain.on_TaskPlan, brain.on_prose

    def plan_with_key(call):
        answer = plan(call)
        for task in answer["subtasks"]:
            task["description"] += f" (you sent {SECRET_MODEL_KEY})"
        return answer

    brain.on_TaskPlan = plan_with_key
    brain.on_prose = lambda call: f"{prose(call)}\n\nDebug: Authorization Bearer {SECRET_MODEL_KEY}"
    serve = search_server.handle

    def hits_with_key(path, body, headers):
        reply = serve(path, body, headers)
        for hit in (reply.body or {}).get("results", []):
            hit["title"] += f" [{SECRET_SEARCH_KEY}]"
            hit["content"] += f" Request made with api_key={SECRET_SEARCH_KEY}."
        return reply

    search_server.handle = hits_with_key


async def stored_text(target: str, thread_id: str) -> str:
    """Every checkpoint and pending write of the thread, read back (whatever the store's
    encoding), and its event log, as one text."""
    parts = []
    async with open_checkpointer(target) as saver:
        async for item in saver.alist({"configurable": {"thread_id": thread_id}}):
            parts.append(json.dumps(item.checkpoint["channel_values"], default=str))
            parts.append(json.dumps([w[1:] for w in item.pending_writes or []], default=str))
    import sqlite3

    with sqlite3.connect(target) as db:
        rows = db.execute("SELECT data FROM run_events WHERE thread_id = ?", (thread_id,))
        parts += [data for (data,) in rows]
    return "\n".join(parts)


def test_keys_echoed_in_answers_reach_no_state_report_log_or_progress(
    chat_server, search_server, tmp_path, monkeypatch, capsys
):
    echo_keys(chat_server, search_server)
    store = str(tmp_path / "c.sqlite")
    monkeypatch.setenv("DEEP_RESEARCH_CHECKPOINT_DB", store)
    report, record = tmp_path / "r.md", tmp_path / "r.json"
    flags = ["--max-iterations", "1", "--min-iterations", "1", "--thread-id", "echo"]
    code = main(
        ["run", "Compare zstd and xz", *flags, "--output", str(report), "--json", str(record)]
    )
    progress = capsys.readouterr().err
    assert code == 0, progress
    assert main(["export", "echo", "--output", str(tmp_path / "e.html")]) == 0
    written = {
        "report": report.read_text(encoding="utf-8"),
        "json": record.read_text(encoding="utf-8"),
        "export": (tmp_path / "e.html").read_text(encoding="utf-8"),
        "progress": progress,
        "store": asyncio.run(stored_text(store, "echo")),
    }
    leaks = {where: key for where, text in written.items() for key in KEYS if key in text}
    assert leaks == {}
    assert "you sent ***" in written["progress"]  # the echo was there, and was removed
    assert "api_key=***" in written["store"]
    assert "## Sources" in written["report"]
