"""The task file: JSON lines with `id`, `prompt`, `language` and an optional `reference`.

The same shape as DeepResearch Bench's `query.jsonl` (its extra fields, such as `topic`, are
kept and ignored). Its reference reports and criteria live in other files keyed by `id` or
`prompt`; `attach` joins them to the tasks.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from deep_research.domain.language import detect_language, is_cjk
from deep_research.evaluation.records import TaskCriteria

MAX_ID_BYTES = 200  # an id names a folder; file systems take 255 bytes a name


class TaskFileError(ValueError):
    """A task, reference or criteria file that cannot be used; the message names file and line."""


class EvalTask(BaseModel):
    """One research task to run and score."""

    model_config = ConfigDict(extra="ignore")

    id: int | str
    prompt: str = Field(min_length=1)
    language: str = ""  # "en", "zh", ...; detected from the prompt when missing
    reference: str | None = Field(None, description="A reference report to score against.")

    @field_validator("id")
    @classmethod
    def _usable_id(cls, value: int | str) -> int | str:
        """An id names the task's folder: a name a file system takes, said before any call."""
        if isinstance(value, str) and (not value.strip() or "/" in value or value in (".", "..")):
            raise ValueError("an id must be a number or a non-empty name without '/'")
        if isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError("an id may not hold a control character (a NUL, a line break ...)")
        if len(str(value).encode("utf-8")) > MAX_ID_BYTES:
            raise ValueError(
                f"an id is at most {MAX_ID_BYTES} bytes (it names a folder); "
                f"this one is {len(str(value).encode('utf-8'))}"
            )
        return value

    def model_post_init(self, _context: object) -> None:
        if not self.language:
            self.language = "zh" if is_cjk(detect_language(self.prompt)) else "en"


def _json_lines(path: Path) -> list[tuple[int, dict]]:
    """The non-empty lines of a JSON-lines file, parsed, with their line numbers."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TaskFileError(f"cannot read {path}: {error}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise TaskFileError(f"{path} line {number}: not JSON ({error.msg})") from None
        except RecursionError:
            raise TaskFileError(f"{path} line {number}: JSON nested too deep to read") from None
        if not isinstance(value, dict):
            raise TaskFileError(f"{path} line {number}: expected a JSON object")
        rows.append((number, value))
    return rows


def _problem(error: ValidationError) -> str:
    """The first validation problem, as field: message."""
    first = error.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "line"
    return f"{field}: {first['msg'].removeprefix('Value error, ')}"


def load_tasks(path: Path) -> list[EvalTask]:
    """The tasks of a task file, in order; ids must be unique."""
    tasks, seen = [], set()
    for number, row in _json_lines(path):
        try:
            task = EvalTask.model_validate(row)
        except ValidationError as error:
            raise TaskFileError(f"{path} line {number}: {_problem(error)}") from None
        if str(task.id) in seen:
            raise TaskFileError(f"{path} line {number}: id {task.id!r} appears twice")
        seen.add(str(task.id))
        tasks.append(task)
    if not tasks:
        raise TaskFileError(f"{path} holds no tasks")
    return tasks


def _lookup(rows: list[tuple[int, dict]], task: EvalTask) -> dict | None:
    """The row for a task: the same id, else the same prompt."""
    for _, row in rows:
        if str(row.get("id")) == str(task.id):
            return row
    return next((row for _, row in rows if row.get("prompt") == task.prompt), None)


def attach_references(tasks: list[EvalTask], path: Path) -> list[EvalTask]:
    """Tasks with references from a file of `{id, prompt, article}` lines (DeepResearch Bench's)."""
    rows = _json_lines(path)
    joined = []
    for task in tasks:
        row = _lookup(rows, task)
        article = row.get("article") if row else None
        joined.append(task.model_copy(update={"reference": article}) if article else task)
    return joined


def load_criteria(path: Path) -> list[TaskCriteria]:
    """Criteria from a file of `TaskCriteria` lines (DeepResearch Bench's `criteria.jsonl`)."""
    criteria = []
    for number, row in _json_lines(path):
        try:
            criteria.append(TaskCriteria.model_validate(row))
        except ValidationError as error:
            raise TaskFileError(f"{path} line {number}: {_problem(error)}") from None
    return criteria


def criteria_for(task: EvalTask, given: list[TaskCriteria]) -> TaskCriteria | None:
    """The given criteria of a task: the same id, else the same prompt."""
    by_id = next((c for c in given if str(c.id) == str(task.id)), None)
    return by_id or next((c for c in given if c.prompt == task.prompt), None)
