"""A stand-in for Ollama's own chat API (`POST /api/chat`, NDJSON stream) with the chat
stand-in's research brain, so that LangChain's `ChatOllama` can be driven end to end."""

from __future__ import annotations

import json
import re

from stand_ins.chat import Brain, ChatCall
from stand_ins.loopback import Reply, StandIn

_SCHEMA_NAME = re.compile(r"^Schema name: (\w+)$", re.MULTILINE)


class OllamaServer(StandIn):
    """Answers `/api/chat` by tool call (when sent tools) or text; counts what it answered."""

    def __init__(self, brain: Brain | None = None) -> None:
        super().__init__()
        self.brain = brain or Brain()
        self.methods: list[str] = []

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path != "/api/chat":
            return Reply(404, {"error": "not found"})
        messages = body.get("messages", [])
        system = "\n".join(m.get("content") or "" for m in messages if m["role"] == "system")
        user = "\n".join(m.get("content") or "" for m in messages if m["role"] != "system")
        tools = body.get("tools") or []
        if tools:
            contract, method = tools[0]["function"]["name"], "tool_calling"
        else:
            match = _SCHEMA_NAME.search(system)
            contract, method = (match.group(1), "prompt") if match else (None, "prose")
        self.methods.append(method)
        answer = self.brain.answer(ChatCall(contract, method, system, user, body))
        message: dict = {"role": "assistant", "content": ""}
        if method == "tool_calling":
            message["tool_calls"] = [{"function": {"name": contract, "arguments": answer}}]
        elif isinstance(answer, str):
            message["content"] = answer
        else:
            message["content"] = f"<tool_call>{json.dumps(answer)}</tool_call>"
        done = {
            "model": body.get("model"),
            "created_at": "2026-12-01T00:00:00Z",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": len(system + user) // 4 + 1,
            "eval_count": len(json.dumps(message)) // 4 + 1,
        }
        first = {**done, "message": message, "done": False}
        del first["done_reason"], first["prompt_eval_count"], first["eval_count"]
        if not body.get("stream", True):
            return Reply(body={**done, "message": message}, content_type="application/json")
        lines = "".join(json.dumps(part) + "\n" for part in (first, done))
        return Reply(raw=lines.encode(), content_type="application/x-ndjson")
