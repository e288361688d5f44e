"""The stand-in model as a worker that calls tools: it uses only the tools a request offers,
with arguments that fit their JSON schemas, and acts as a diligent researcher would.

Each round it reads its budget ("Budget left: 3 searches, 5 page reads, 3 rounds"), spreads the
page reads over the rounds left, and reads first the addresses it was shown that look most
useful for its subtask: a hit by its title and snippet, a link by whatever the prompt shows of
it (its anchor and nearby words when shown, else the words of its address). It cannot read an
address it was not shown. It searches when it has nothing promising left to read: first with the
searches the prompt suggests (the planner's), if any, then with wordings it has not used; it
finishes when nothing is left to read or search.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from jsonschema import Draft202012Validator

from stand_ins.depth_world.reading import is_cjk, measurements, stems, subjects

_BUDGET = re.compile(r"Budget left: (\d+) searches, (\d+) page reads, (\d+) rounds")
_READ = re.compile(r"^Read: .*? — (\S+)$", re.M)
_HIT = re.compile(r"^Hit: (.*?) — (\S+)\n(.*)$", re.M)
_LINK = re.compile(r"^ {2}(\S+)(?: (.*))?$", re.M)
_SUBTASK = re.compile(r"^Subtask: (.*)$", re.M)
_SUGGESTED = re.compile(r"^Suggested first searches \(.*?\): (\[.*\])$", re.M)
# Words that make an address look like it holds measured data, to any researcher.
PROMISING = stems("measurements results data datasheet test report annex appendix method "
                  "specification release notes study trial pdf values")  # fmt: skip
QUERY_FORMS = ("{} test results", "{} datasheet", "{} latest specification",
               "{} laboratory report", "{} measured values", "{} technical data")  # fmt: skip
QUERY_FORMS_ZH = ("{} 测试结果", "{} 数据表", "{} 性能参数", "{} 实验报告")
MOST_READS_A_ROUND = 4


@dataclass(frozen=True)
class Candidate:
    """An address the worker was shown, and how promising it looks."""

    url: str
    score: int
    order: int


_PROMPT_TOOL = re.compile(r"^- (\w+): .*\n {2}arguments schema: (.*)$", re.M)


def offered(body: dict, system: str) -> dict[str, dict]:
    """The tools a request offers, by name, with their parameter schemas: native `tools`, or
    the list written into the prompt (the prompt protocol)."""
    if body.get("tools"):
        return {
            tool["function"]["name"]: tool["function"].get("parameters") or {"type": "object"}
            for tool in body["tools"]
        }
    return {name: json.loads(schema) for name, schema in _PROMPT_TOOL.findall(system)}


def fitting(schema: dict, wanted: dict) -> dict:
    """`wanted` shaped to a tool's schema: only its properties, strings or lists as it says;
    refused (ValueError) when the result does not validate, as a careful model would not send
    it."""
    properties = schema.get("properties", {})
    args = {}
    for name, value in wanted.items():
        if name not in properties:
            continue
        kind = properties[name].get("type")
        if kind == "array" and isinstance(value, str):
            value = [value]
        if kind == "string" and isinstance(value, list):
            value = value[0]
        args[name] = value
    errors = list(Draft202012Validator(schema).iter_errors(args))
    if errors:
        raise ValueError(f"arguments {args} do not fit the schema: {errors[0].message}")
    return args


def _sent_queries(body: dict) -> list[str]:
    """The queries this worker's earlier rounds searched (its own tool calls, as shown)."""
    sent = []
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            try:
                args = json.loads(call["function"]["arguments"] or "{}")
            except json.JSONDecodeError:
                continue
            queries = args.get("queries") or args.get("query") or []
            sent += [queries] if isinstance(queries, str) else list(queries)
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        for raw in re.findall(r"<tool_call>(.*?)</tool_call>", text or "", re.S):
            try:
                args = json.loads(raw).get("arguments", {})
            except json.JSONDecodeError:
                continue
            queries = args.get("queries") or args.get("query") or []
            sent += [queries] if isinstance(queries, str) else list(queries)
    return sent


def candidates(user: str, subtask: str) -> list[Candidate]:
    """Every address shown and not yet read, scored: words shared with the subtask count
    twice, words that promise data once."""
    wanted = stems(subtask)
    read = set(_READ.findall(user))
    found: dict[str, Candidate] = {}
    order = 0
    for title, url, snippet in _HIT.findall(user):
        words = stems(f"{title} {snippet}")
        order += 1
        score = 2 * len(words & wanted) + len(words & PROMISING)
        if measurements(snippet):  # the snippet already gives its figure: less to gain
            score -= 4
        if url not in read:
            found.setdefault(url, Candidate(url, score, order))
    for block in re.findall(r"^Links on this page:\n((?: {2}.*\n?)+)", user, re.M):
        for url, context in _LINK.findall(block):
            order += 1
            words = stems(f"{context} {re.sub(r'[/._:-]+', ' ', url.split('//')[-1])}")
            score = 2 * len(words & wanted) + len(words & PROMISING)
            if url not in read:
                found.setdefault(url, Candidate(url, score, order))
    return sorted(found.values(), key=lambda c: (-c.score, c.order))


def new_queries(subtask: str, question: str, sent: list[str], count: int) -> list[str]:
    """New wordings for the subtask's subject, `count` at most, none already searched."""
    names = subjects(subtask) or subjects(question) or [subtask]
    forms = QUERY_FORMS_ZH if is_cjk(subtask) else QUERY_FORMS
    done = {q.casefold() for q in sent}
    fresh = [f.format(n) for n in names for f in forms if f.format(n).casefold() not in done]
    return fresh[:count]


def decide(body: dict, system: str, user: str, question: str) -> list[tuple[str, dict]]:
    """This round's tool calls (name, arguments), only of tools the request offers."""
    tools = offered(body, system)
    subtask_match = _SUBTASK.search(user)
    subtask = subtask_match.group(1) if subtask_match else question
    budget = _BUDGET.search(user)
    searches, pages, rounds = (int(n) for n in budget.groups()) if budget else (0, 0, 1)
    calls: list[tuple[str, dict]] = []
    promising = [c for c in candidates(user, subtask) if c.score > 0]
    if "read_page" in tools and pages:
        reads = min(pages, MOST_READS_A_ROUND, math.ceil(pages / max(1, rounds)))
        for candidate in promising[:reads]:
            calls.append(("read_page", fitting(tools["read_page"], {"url": candidate.url})))
    short = "read_page" not in tools or len(promising) < min(2, pages)
    if "web_search" in tools and searches and short:
        suggested = _SUGGESTED.search(user)
        sent = _sent_queries(body)
        queries = new_queries(subtask, question, sent, min(2, searches))
        if suggested and not sent:  # its first searches: those the prompt suggests
            queries = json.loads(suggested.group(1))[:searches]
        if queries:
            calls.append(("web_search", fitting(tools["web_search"], {"queries": queries})))
    if not calls and "finish" in tools:
        reason = "nothing promising is left to read or search"
        calls.append(("finish", fitting(tools["finish"], {"reason": reason})))
    return calls
