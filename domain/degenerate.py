"""Degenerate replies: empty, cut off, echoing the prompt's scaffolding, or looping on a phrase.

Small models do all four: Gemma 3 270M returned its own prompt ("Question: ... Research notes:
... [1] zstd(1): Options —") followed by the same man-page lines hundreds of times. Such a reply
must never pass as a report or as a field of a contract. The checks are structural (labels,
repetition, verbatim overlap), never about meaning.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache

from langchain_core.messages import BaseMessage, SystemMessage
from pydantic import BaseModel

from deep_research.domain.citations import clean_citations
from deep_research.domain.markup import strip_markers
from deep_research.state import Source

# A prompt line that starts with a label: "Question: ...", "Research notes:", "Evidence:".
_LABEL = re.compile(r"^([A-Z][A-Za-z ]{2,40}):(?:[ \t]|$)", re.M)
_MARKERS = ("<data>", "</data>", "Schema name:", "<schema>", "</schema>")
_WORD = re.compile(r"\w+", re.U)
_DATA = re.compile(r"<data>\n.*?\n</data>", re.S)
# A numbered source as the writer is shown it: "[3] Title — https://...".
_SOURCE_LINE = re.compile(r"^\[\d+\] .* — \S+://\S*$", re.M)
SOURCE_LINES_ECHOED = 2  # this many of the prompt's source lines handed back is the prompt
SHINGLE = 8  # words per shingle for the verbatim-overlap test
ECHO_SHARE = 0.7  # share of the reply's shingles found verbatim in the prompt
LOOP_UNIQUE = 0.35  # below this share of distinct shingles, a long reply loops
LOOP_MIN_WORDS = 80
LINE_REPEATS = 4  # one non-trivial line this many times is a loop
COPIED_MIN_CHARS = 15  # a field this long found verbatim in the instructions was copied
DESCRIPTION_MIN_CHARS = 40  # a schema description this long, found inside a field, was copied


def _prompt_text(messages: list[BaseMessage]) -> str:
    """All the prompt's messages as one text."""
    return "\n".join(m.text for m in messages)


def _shingles(text: str) -> list[tuple[str, ...]]:
    """The reply's runs of `SHINGLE` words, case-folded, for overlap and repetition."""
    words = [w.casefold() for w in _WORD.findall(text)]
    return [tuple(words[i : i + SHINGLE]) for i in range(max(0, len(words) - SHINGLE + 1))]


def echoes_prompt(reply: str, prompt: str, own: str = "") -> str | None:
    """Why `reply` is the prompt handed back (its labels, its markers, its text), or None.

    `own` is text of the prompt the reply may repeat (the current report, in a revision). The
    prompt's data sections (sources, notes) may be quoted at any length: a report may quote its
    sources. Their numbered source lines handed back as a list are the prompt, not a report.
    """
    labels = {label for label in _LABEL.findall(prompt)}
    echoed = sorted(label for label in labels if re.search(rf"^{re.escape(label)}:", reply, re.M))
    if len(echoed) >= 2:
        return f"it repeats the prompt's scaffolding ({', '.join(echoed)})"
    markers = [m for m in _MARKERS if m in reply and m in prompt]
    if markers:
        return f"it repeats the prompt's markup ({', '.join(markers)})"
    listed = set(_SOURCE_LINE.findall(prompt))
    handed_back = sum(line.strip() in listed for line in reply.splitlines())
    if handed_back >= SOURCE_LINES_ECHOED:
        return f"it hands back the prompt's list of sources ({handed_back} lines of it)"
    shingles = _shingles(reply)
    if len(shingles) >= 10:
        known = set(_shingles(_DATA.sub("\n", prompt))) - set(_shingles(own))
        share = sum(s in known for s in shingles) / len(shingles)
        if share >= ECHO_SHARE:
            return f"{share:.0%} of it is copied word for word from the prompt"
    return None


def loops(text: str) -> str | None:
    """Why `text` loops on one phrase or line, or None."""
    lines = Counter(line.strip() for line in text.splitlines() if len(line.strip()) >= 20)
    if lines:
        line, count = lines.most_common(1)[0]
        if count >= LINE_REPEATS:
            return f"it repeats one line {count} times ({line[:60]!r})"
    shingles = _shingles(text)
    if len(shingles) + SHINGLE - 1 >= LOOP_MIN_WORDS:
        unique = len(set(shingles)) / len(shingles)
        if unique < LOOP_UNIQUE:
            return f"it loops: only {unique:.0%} of its phrases are distinct"
    return None


def prose_problem(
    text: str,
    finish_reason: str,
    prompt: list[BaseMessage],
    own: str = "",
    sources: list[Source] | None = None,
) -> str | None:
    """What makes a prose reply (a report) unusable, named for the model; None if nothing.

    `own`: text the reply may repeat word for word (the report a revision starts from);
    `sources`: the numbered sources the reply may cite; when given, at least one of its
    citations must resolve to one of them (`[7]` of three sources cites nothing).
    """
    if not text.strip():
        return "the reply is empty"
    if finish_reason == "length":
        return "the reply was cut off at the token limit before it ended"
    problem = echoes_prompt(text, _prompt_text(prompt), own) or loops(text)
    if problem is None and sources is not None:
        cleaned, cited = clean_citations(text, sources)
        if not cited:
            return f"it cites none of the {len(sources)} numbered sources it was given as [n]"
        if not any(c.isalnum() for c in strip_markers(cleaned)):  # `[1] https://made.up/x`
            return "it has no text of its own, only citation markers and addresses"
    return problem


def _strings(value: object, path: str = "") -> list[tuple[str, str]]:
    """Every string in a contract's value, with where it sits."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, str):
        return [(path or "reply", value)]
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _strings(v, f"{path}.{k}".strip("."))]
    if isinstance(value, list):
        return [item for i, v in enumerate(value) for item in _strings(v, f"{path}.{i}")]
    return []


def _schema_nodes(schema: object) -> Iterator[dict]:
    """Every object of a JSON schema, the schema itself included, wherever it is nested."""
    if isinstance(schema, list):
        for item in schema:
            yield from _schema_nodes(item)
    elif isinstance(schema, dict):
        yield schema
        for item in schema.values():
            yield from _schema_nodes(item)


def allowed_values(schema: object) -> set[str]:
    """Every string a JSON schema itself allows as a value (`enum` members, `const`s).

    Such a value is written in the instructions the model was shown, and copying it is the
    right answer: `"straightforward"` is a query type, not the schema handed back.
    """
    found: set[str] = set()
    for node in _schema_nodes(schema):
        found.update(v for v in node.get("enum", []) if isinstance(v, str))
        if isinstance(node.get("const"), str):
            found.add(node["const"])
    return found


@cache
def _allowed_in(contract: type[BaseModel]) -> frozenset[str]:
    """`allowed_values` of a contract's schema, built once per contract (pydantic takes
    milliseconds to build a schema, and every structured reply is checked)."""
    return frozenset(allowed_values(contract.model_json_schema()))


@cache
def _descriptions(schema: str) -> tuple[str, ...]:
    """The schema's descriptions long enough that no answer holds one, without their final
    full stop: a whole sentence of instructions inside a field (Gemma 3 270M wrote a finding as
    "The worker found the following: 'One claim a worker found, citing the ids of the sources
    that support it (3):") was copied, whatever it was wrapped in."""
    try:
        parsed = json.loads(schema) if schema else {}
    except ValueError:
        return ()
    found = [
        node["description"].rstrip(".")
        for node in _schema_nodes(parsed)
        if isinstance(node.get("description"), str)
        and len(node["description"]) >= DESCRIPTION_MIN_CHARS
    ]
    return tuple(dict.fromkeys(found))


def field_problem(value: BaseModel, prompt: list[BaseMessage], schema: str = "") -> str | None:
    """The first field of a structured reply that echoes the instructions, the prompt's markup
    or loops, if any. `schema`: the JSON schema the model was shown (its descriptions count as
    instructions: a 270M model answered a subtask with "Search queries to start with (2-4).").
    A value the contract allows (an enum member) is never counted as copied."""
    text = _prompt_text(prompt)
    instructions = "\n".join(m.text for m in prompt if isinstance(m, SystemMessage)) + schema
    allowed = _allowed_in(type(value))
    prompt_labels = set(_LABEL.findall(text))  # once per reply, not once per field
    for path, string in _strings(value):
        copied = string.strip() not in allowed and string.strip() in instructions
        copied = copied or any(text in string for text in _descriptions(schema))
        if len(string.strip()) >= COPIED_MIN_CHARS and copied:
            return f"{path} copies the instructions instead of answering ({string.strip()[:60]!r})"
        markers = [m for m in _MARKERS if m in string and m in text]
        if markers:
            return f"{path} repeats the prompt's markup ({', '.join(markers)})"
        labels = [lab for lab in prompt_labels if re.search(rf"^{lab}:", string, re.M)]
        if len(labels) >= 2:
            return f"{path} repeats the prompt's scaffolding ({', '.join(sorted(labels))})"
        looped = loops(string)
        if looped:
            return f"{path}: {looped}"
    return None
