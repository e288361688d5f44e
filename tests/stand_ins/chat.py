"""A stand-in OpenAI chat-completions server with a scripted research "brain".

It answers the three structured-output methods (JSON-schema response format, tool calling,
schema in the prompt) and plain prose, streamed or not, and reports token usage that the tests
compare with what the graph counted.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stand_ins.loopback import Reply, StandIn
from stand_ins.tool_brain import ToolBrain, is_worker_request, offered_tools

_EVIDENCE = re.compile(r"^\[(\d+)\] (.*?) — (\S+)$", re.MULTILINE)
_SCHEMA_NAME = re.compile(r"^Schema name: (\w+)$", re.MULTILINE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_PAIR = re.compile(
    r"^Pair (\d+)\nStatement: (.*?)\nSource \[\d+\]:\n<data>\n(.*?)\n</data>", re.M | re.S
)


@dataclass
class ChatCall:
    """One request as the brain sees it."""

    contract: str | None  # the schema asked for, None for prose
    method: str  # json_schema | tool_calling | prompt | prose
    system: str
    user: str
    body: dict

    @property
    def question(self) -> str:
        match = re.search(r"^(?:Question|Overall question): (.*)$", self.user, re.MULTILINE)
        return match.group(1) if match else ""

    def evidence_ids(self) -> list[int]:
        return [int(n) for n, _, _ in _EVIDENCE.findall(self.user)]


@dataclass
class Brain:
    """Deterministic answers for each contract; tests change the knobs."""

    subtasks: int = 3
    query_type: str = "breadth_first"
    scores: list[float] = field(default_factory=lambda: [70, 85, 90])
    another_round_worthwhile: bool = True
    gap_tasks: int = 1
    worker_gaps_first_cycle: bool = False
    invented_citations: bool = False
    citation_verdicts: str = "supported"  # supported | partial | unsupported | mixed
    rewrites: bool = True
    shared_query: bool = False  # every subtask also asks one common query (exercises the cache)
    empty_strings: bool = False
    # A careful judge: (statement, source text) -> known verdict, None when the truth is unknown;
    # then only a verbatim quote of the source is supported. Judged pairs are kept in `judged`.
    judge: Callable[[str, str], str | None] | None = None
    judged: list[tuple[str, str]] = field(default_factory=list)
    unknown_pairs: list[str] = field(default_factory=list)
    # Writes the report's body from the numbered sources (id, title, url) instead of the default.
    composer: Callable[[list[tuple[int, str, str]]], str] | None = None
    calls: Counter = field(default_factory=Counter)
    tools: ToolBrain = field(default_factory=ToolBrain)  # a worker choosing its tools
    # Questions asked back before planning ({question, suggested_answers}); none: the question
    # is clear enough.
    clarifying: list[dict] = field(default_factory=list)

    def on_Clarification(self, call: ChatCall) -> dict:
        return {"needed": bool(self.clarifying), "questions": self.clarifying}

    def on_PageQuotes(self, call: ChatCall) -> dict:
        return self.tools.quotes(call.user)

    def decide_tools(self, call: ChatCall) -> list[tuple[str, dict]] | str:
        """A worker's decide request: the calls its `tools` brain makes with what is offered."""
        self.calls["tools"] += 1
        return self.tools.decide(call.user, offered_tools(call.body, call.system))

    def answer(self, call: ChatCall) -> Any:
        self.calls[call.contract or "prose"] += 1
        handler = getattr(self, f"on_{call.contract}", None) if call.contract else None
        return handler(call) if handler else self.on_prose(call)

    def _cjk(self, call: ChatCall) -> bool:
        return bool(_CJK.search(call.question))

    def on_TaskPlan(self, call: ChatCall) -> dict:
        q = call.question
        word = "子课题" if self._cjk(call) else "aspect"
        return {
            "query_type": self.query_type,
            "subtasks": [
                {
                    "id": n,
                    "description": "" if self.empty_strings else f"{q} — {word} {n}",
                    "search_queries": ["", " "]
                    if self.empty_strings
                    else [f"{q} {word} {n}", f"{q} {word} {n} data"]
                    + ([f"{q} overview"] if self.shared_query else []),
                    "complexity": "simple",
                }
                for n in range(1, self.subtasks + 1)
            ],
            "recommended_worker_count": self.subtasks,
        }

    def on_GapCheck(self, call: ChatCall) -> dict:
        cycle_one = "Queries already run" in call.user and call.user.count('"') <= 8
        if self.worker_gaps_first_cycle and cycle_one:
            return {"gaps": ["more numbers"], "next_queries": [f"{call.question} numbers"]}
        return {"gaps": [], "next_queries": []}

    def on_WorkerFindings(self, call: ChatCall) -> dict:
        ids = call.evidence_ids()
        claim = "发现" if self._cjk(call) else "Finding"
        findings = [{"claim": f"{claim} {i}", "source_ids": [i]} for i in ids[:3]]
        if self.invented_citations:
            findings.append({"claim": "Invented", "source_ids": [999]})
        return {
            "findings": findings,
            "summary": "" if self.empty_strings else "Summary.",
            "gaps": [],
            "confidence": 0.8,
        }

    def on_EvidenceWeighing(self, call: ChatCall) -> dict:
        """Evidence that agrees and all bears on the question (what most worlds hold)."""
        return {"disagreements": [], "set_aside": []}

    def on_QualityAssessment(self, call: ChatCall) -> dict:
        index = self.calls["QualityAssessment"] - 1
        score = self.scores[min(index, len(self.scores) - 1)]
        dimensions = ("completeness", "accuracy", "depth", "structure", "readability")
        return {
            "score": score,
            "dimensions": {name: score for name in (*dimensions, "source_quality")},
            "issues": ["needs more depth"],
            "another_round_worthwhile": self.another_round_worthwhile,
        }

    def on_GapAnalysis(self, call: ChatCall) -> dict:
        round_ = self.calls["GapAnalysis"]
        q = call.question
        tasks = [
            {
                "id": 1,
                "description": f"{q} — gap {round_}.{n}",
                "search_queries": [f"{q} gap {round_} {n}"],
                "complexity": "simple",
            }
            for n in range(1, self.gap_tasks + 1)
        ]
        return {"gaps": [f"gap {round_}"] if tasks else [], "supplementary_tasks": tasks}

    def _careful(self, call: ChatCall) -> dict:
        verdicts = []
        for number, statement, source in _PAIR.findall(call.user):
            verdict = self.judge(statement, source)
            if verdict is None:
                self.unknown_pairs.append(statement)
                verdict = "supported" if statement.rstrip(".。") in source else "unsupported"
            self.judged.append((statement, verdict))
            verdicts.append({"pair": int(number), "verdict": verdict, "quote": source[:80]})
        return {"verdicts": verdicts}

    def on_PairVerdicts(self, call: ChatCall) -> dict:
        if self.judge:
            return self._careful(call)
        pairs = [int(n) for n in re.findall(r"^Pair (\d+)$", call.user, re.MULTILINE)]
        cycle = ["supported", "unsupported", "partial"]
        verdicts = []
        for n in pairs:
            verdict = self.citation_verdicts
            if verdict == "mixed":
                verdict = cycle[(n - 1) % 3]
            verdicts.append({"pair": n, "verdict": verdict, "quote": f"quote {n}"})
        return {"verdicts": verdicts}

    def on_StatementRewrites(self, call: ChatCall) -> dict:
        rewrites = []
        blocks = re.split(r"^Statement (\d+): ", call.user, flags=re.MULTILINE)[1:]
        for number, block in zip(blocks[::2], blocks[1::2], strict=True):
            source = re.search(r"Source \[(\d+)\].*?<data>\n(.*?)\n</data>", block, re.S)
            excerpt = source.group(2).splitlines()[-1]  # the source's text, not its title
            text = f"{excerpt.split(':')[-1].strip()} [{source.group(1)}]"
            rewrites.append({"statement": int(number), "text": text if self.rewrites else ""})
        return {"rewrites": rewrites}

    def on_ReportOutline(self, call: ChatCall) -> dict:
        """Sections as many as the prompt allows (one per two sources), each a run of sources."""
        ids = call.evidence_ids()
        instructions = call.system or call.user  # no system role: they open the user message
        most = int(re.search(r"to (\d+) sections", instructions).group(1))
        count = max(1, min(most, (len(ids) + 1) // 2))
        word = "部分" if self._cjk(call) else "Part"
        size = -(-len(ids) // count)
        return {
            "title": call.question,
            "sections": [
                {
                    "title": f"{word} {n + 1}",
                    "question": f"{word} {n + 1}?",
                    "source_ids": ids[n * size : (n + 1) * size],
                }
                for n in range(count)
            ],
        }

    def _framing(self, call: ChatCall) -> str | None:
        """The summary (restating the first cited sentence) or the conclusion (citing nothing)."""
        cjk = self._cjk(call)
        instructions = call.system or call.user.split("\n\n", 1)[0]
        if "summary that opens" in instructions:
            cited = re.findall(r"^[^#\n][^\n]*\[\d+\][^\n]*$", call.user, re.MULTILINE)
            return f"## {'摘要' if cjk else 'Summary'}\n\n{cited[0] if cited else ''}"
        if "the conclusion of a research report" in instructions:
            closing = (
                "以上各部分回答了这个问题。" if cjk else "The sections above answer the question."
            )
            return f"## {'结论' if cjk else 'Conclusion'}\n\n{closing}"
        return None

    def on_prose(self, call: ChatCall) -> str:
        if self.empty_strings:
            return ""
        framing = self._framing(call)
        if framing is not None:
            return framing
        ids = call.evidence_ids()
        cjk = self._cjk(call)
        section = re.search(r"^Section: (.*)$", call.user, re.MULTILINE)
        current = re.search(r"Current section:\n<data>\n(.*?)\n</data>", call.user, re.S)
        head = current.group(1) if current else f"## {section.group(1) if section else '?'}"
        body = "\n".join(
            (f"来源 {i} 支持这一点 [{i}]。" if cjk else f"Source {i} supports this [{i}].")
            for i in ids
        )
        if self.composer:
            body = self.composer(
                [(int(n), title, url) for n, title, url in _EVIDENCE.findall(call.user)]
            )
        extra = ""
        if self.invented_citations:
            extra = (
                "\nAn invented claim [999] and [1, 998]. See https://invented.example/page."
                "\n\n## References\n- [999] Fake"
            )
        return f"{head}\n\n{body}{extra}"


class ChatServer(StandIn):
    """The stand-in server. Knobs: brain, refuse_tools, refuse_response_format, reply_wrapper."""

    def __init__(self, brain: Brain | None = None) -> None:
        super().__init__()
        self._brain_lock = threading.Lock()
        self.set_knobs()
        self.brain = brain or self.brain

    def set_knobs(self) -> None:
        """Every knob at its default, every count at zero."""
        self.brain = Brain()
        self.refuse_tools = False
        self.refuse_response_format = False
        self.reply_wrapper = lambda text, call: text  # e.g. add <think> blocks
        # Real servers' ways of saying no, per feature ("json_schema", "json_object", "tools"):
        # (status, message), e.g. llama-cpp-python's 500 naming response_format.type.
        self.refusals: dict[str, tuple[int, str]] = {}
        self.ignore_response_format = False  # accept it, answer prose (a proxy that drops it)
        self.context_window: int | None = None  # prompts beyond it are refused
        self.empty_stream_when_too_long = False  # llama-cpp-python: 200 and an empty stream
        self.stream_parts: list[float] | None = None  # seconds before each part of a stream
        # Characters of text per streamed chunk (None: the whole reply in one chunk); real
        # servers send about one token, 3-4 characters, a chunk
        self.chunk_chars: int | None = None
        self.stream_usage = True  # False: no usage chunk (llama-cpp-python ignores the option)
        # What GET/POST on other paths answer, e.g. {"/props": {...}} as llama.cpp's server does
        self.info_paths: dict[str, dict] = {}
        self.info_latency = 0.0  # seconds before answering them (a remote server's round trip)
        self.fault = lambda number, body: None  # return a Reply to inject a failure
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.answered = 0
        self._count = 0

    def delay(self, path: str) -> float:
        """A model's latency is its generation: completions take `latency`, other paths (the
        context-window probes) `info_latency` (0: at once, as a server on loopback answers)."""
        return self.latency if path.endswith("/chat/completions") else self.info_latency

    def _refusal(self, body: dict) -> Reply | None:
        """A feature refusal or a too-long prompt, as the configured real server answers it."""
        kind = body.get("response_format", {}).get("type")
        feature = "tools" if body.get("tools") else kind
        if feature in self.refusals:
            status, message = self.refusals[feature]
            return Reply(status, {"error": {"message": message, "type": "server_error"}})
        tokens = len(json.dumps(body.get("messages"), ensure_ascii=False)) // 4 + 1
        if self.context_window and tokens > self.context_window:
            if body.get("stream") and self.empty_stream_when_too_long:
                return Reply(200, sse="")
            message = (
                f"This model's maximum context length is {self.context_window} tokens. However, "
                f"you requested {tokens} tokens ({tokens} in the messages, 0 in the completion)."
            )
            return Reply(400, {"error": {"message": message, "code": "context_length_exceeded"}})
        return None

    def _call(self, body: dict) -> ChatCall:
        messages = body.get("messages", [])
        system = "\n".join(str(m.get("content")) for m in messages if m["role"] == "system")
        user = "\n".join(
            str(m.get("content")) for m in messages if m["role"] in ("user", "assistant")
        )
        if is_worker_request(body, system):  # a worker's decide: the model picks its tools
            native = bool(body.get("tools"))
            return ChatCall(None, "tools" if native else "tools_prompt", system, user, body)
        if body.get("response_format", {}).get("type") == "json_object":
            match = _SCHEMA_NAME.search(system)
            return ChatCall(match.group(1) if match else None, "json_object", system, user, body)
        if body.get("response_format", {}).get("type") == "json_schema":
            return ChatCall(
                body["response_format"]["json_schema"]["name"], "json_schema", system, user, body
            )
        if body.get("tools"):
            return ChatCall(
                body["tools"][0]["function"]["name"], "tool_calling", system, user, body
            )
        match = _SCHEMA_NAME.search(system)
        if match:
            return ChatCall(match.group(1), "prompt", system, user, body)
        return ChatCall(None, "prose", system, user, body)

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if not path.endswith("/chat/completions"):  # e.g. a context-window probe
            known = self.info_paths.get(path)
            return Reply(200, known) if known is not None else Reply(404, {"detail": "Not Found"})
        with self._brain_lock:
            self._count += 1
            number = self._count
        injected = self.fault(number, body)
        if injected is not None:
            return injected
        refused = self._refusal(body)
        if refused is not None:
            return refused
        if self.refuse_tools and body.get("tools"):
            return Reply(
                400,
                {"error": {"message": "tools are not supported", "type": "invalid_request_error"}},
            )
        if self.refuse_response_format and body.get("response_format"):
            return Reply(
                400,
                {
                    "error": {
                        "message": "response_format is not supported",
                        "type": "invalid_request_error",
                    }
                },
            )
        call = self._call(body)
        if self.ignore_response_format and call.method in ("json_schema", "json_object"):
            call = ChatCall(None, "prose", call.system, call.user, body)
        with self._brain_lock:
            if call.method in ("tools", "tools_prompt"):
                answer = self.brain.decide_tools(call)
            else:
                answer = self.brain.answer(call)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if call.method == "tools" and isinstance(answer, list):
            message["tool_calls"] = [
                {
                    "id": f"call_{number}_{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for n, (name, args) in enumerate(answer)
            ]
            text = json.dumps(answer)
        elif call.method == "tools_prompt" and isinstance(answer, list):
            text = "\n".join(
                "<tool_call>" + json.dumps({"name": name, "arguments": args}) + "</tool_call>"
                for name, args in answer
            )
            message["content"] = text
        elif isinstance(answer, str) and call.method.startswith("tools"):
            text = message["content"] = answer
        elif call.method == "tool_calling":
            arguments = json.dumps(answer, ensure_ascii=False)
            message["tool_calls"] = [
                {
                    "id": f"call_{number}",
                    "type": "function",
                    "function": {"name": call.contract, "arguments": arguments},
                }
            ]
            text = arguments
        else:
            text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
            if call.method == "prompt":
                text = f"<tool_call>{text}</tool_call>"
            text = self.reply_wrapper(text, call)
            message["content"] = text
        prompt_tokens = len(json.dumps(body.get("messages"), ensure_ascii=False)) // 4 + 1
        completion_tokens = len(text) // 4 + 1
        with self._brain_lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.answered += 1
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if body.get("stream") and self.stream_parts is not None:
            return Reply(sse_parts=self._slow_sse(body.get("model", ""), text, number))
        if body.get("stream"):
            return Reply(sse=self._sse(body.get("model", ""), message, usage, number))
        return Reply(
            200,
            {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": usage,
            },
        )

    def _slow_sse(self, model: str, text: str, number: int) -> list[tuple[float, str]]:
        """Prose streamed in as many parts as `stream_parts` has delays, each after its delay."""
        waits = self.stream_parts or [0.0]
        size = -(-len(text) // len(waits))
        parts = []
        for index, wait in enumerate(waits):
            piece = text[index * size : (index + 1) * size]
            finish = "stop" if index == len(waits) - 1 else None
            chunk = {
                "id": f"chatcmpl-{number}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": finish}],
            }
            parts.append((wait, f"data: {json.dumps(chunk)}\n\n"))
        parts.append((0.0, "data: [DONE]\n\n"))
        return parts

    def _sse(self, model: str, message: dict, usage: dict, number: int) -> str:
        head = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "created": 0}
        text = message.get("content") or ""
        size = self.chunk_chars or max(1, len(text))
        pieces = [text[at : at + size] for at in range(0, len(text), size)] or [""]
        deltas: list[dict] = [{"role": "assistant", "content": pieces[0]}]
        deltas += [{"content": piece} for piece in pieces[1:]]
        if message.get("tool_calls"):  # tool calls in the first chunk, arguments whole
            deltas[0]["tool_calls"] = [
                {"index": n, **tool_call} for n, tool_call in enumerate(message["tool_calls"])
            ]
        chunks = [
            {**head, "model": model, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
            for d in deltas
        ]
        chunks.append(
            {
                **head,
                "model": model,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
        )
        if self.stream_usage:
            chunks.append({**head, "model": model, "choices": [], "usage": usage})
        return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"

    @property
    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]
