"""A batch file: one question per line, or JSONL with a question and settings per line.

Each question gets a thread id derived from the file's path, its line and its text, so running
the same command again finds the same runs: finished ones are skipped, interrupted ones resume.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from deep_research.service.preflight import BadInput, check_question

_LINE_BREAK = re.compile(r"\r?\n")  # only real line ends: str.splitlines also splits on \x1c-\x1e


@dataclass(frozen=True)
class BatchQuestion:
    """One question of a batch, where it came from, and the settings it overrides."""

    line: int
    question: str
    thread_id: str
    settings: dict = field(default_factory=dict)

    def report_name(self) -> str:
        """The report's file name: the line number, then a slug of the question."""
        slug = re.sub(r"[^\w]+", "-", self.question.casefold()).strip("-")[:50] or "question"
        return f"{self.line:04d}-{slug}.md"


def _digest(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def thread_id_for(path: Path, line: int, question: str) -> str:
    """A stable thread id: the same file, line and question always name the same run."""
    return f"batch-{_digest(str(path.resolve()), 10)}-{line}-{_digest(question, 8)}"


def _parse_json_line(text: str, line: int) -> tuple[str, dict]:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadInput(f"line {line}: not valid JSON ({error.msg})") from None
    if not isinstance(record, dict) or not isinstance(record.get("question"), str):
        raise BadInput(f'line {line}: expected an object with a "question" string')
    settings = record.get("settings", {})
    if not isinstance(settings, dict):
        raise BadInput(f'line {line}: "settings" must be an object')
    unknown = set(record) - {"question", "settings"}
    if unknown:
        raise BadInput(f"line {line}: unknown keys {sorted(unknown)}")
    return record["question"], settings


def read_batch(path: Path) -> list[BatchQuestion]:
    """The file's questions, blank lines and `#` comments skipped; BadInput names a bad line.

    Every question is checked as `run` checks one (control characters, length) before the
    first is researched: a bad line 7 never costs lines 1-6 again on every rerun.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read {path}: {error}") from None
    questions = []
    for number, raw in enumerate(_LINE_BREAK.split(text), start=1):
        stripped = raw.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("{"):
            question, settings = _parse_json_line(stripped, number)
        else:
            question, settings = stripped, {}
        try:
            question = check_question(question)
        except BadInput as error:
            raise BadInput(f"line {number}: {error}") from None
        questions.append(
            BatchQuestion(number, question, thread_id_for(path, number, question), settings)
        )
    if not questions:
        raise BadInput(f"{path} holds no questions")
    return questions


def without_repeats(questions: list[BatchQuestion]) -> tuple[list[BatchQuestion], list[str]]:
    """Each question researched once: the first of each (same question, same settings), and
    a note per repeat naming both lines."""
    first: dict[str, int] = {}
    kept, notes = [], []
    for question in questions:
        key = json.dumps([question.question.casefold(), question.settings], sort_keys=True)
        if key in first:
            notes.append(f"line {question.line} repeats line {first[key]}: researched once")
            continue
        first[key] = question.line
        kept.append(question)
    return kept, notes
