"""The eval folder: a manifest, the checkpoint store, one folder per task, the summary.

```
DIR/eval.json             eval id (names the threads), settings, judge model, task file
DIR/checkpoints.sqlite    the research runs (unless --checkpoint-db names another store)
DIR/tasks/ID/task.json    the task (a rerun must bring the same one under this id)
DIR/tasks/ID/report.md    the final report
DIR/tasks/ID/run.json     thread id, stop reason, rounds, usage, cost, wall time
DIR/tasks/ID/criteria.json, race.json, fact.json, judge_usage.json   each judging stage
DIR/tasks/ID/result.json  everything measured; its presence marks the task done
DIR/tasks/ID/error.txt    why the last attempt failed (removed once the task is done)
DIR/summary.json, DIR/summary.md
```
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

Record = TypeVar("Record", bound=BaseModel)


def write_json(path: Path, value: Any) -> None:
    """Write a JSON file whole (a crash leaves the old file or the new one, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    text = json.dumps(to_jsonable_python(value), ensure_ascii=False, indent=2)
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(path)


def read_record(path: Path, kind: type[Record]) -> Record | None:
    """A record written earlier, or None when there is none."""
    if not path.exists():
        return None
    return kind.model_validate_json(path.read_text(encoding="utf-8"))


class EvalDir:
    """Paths inside one eval folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def manifest(self) -> Path:
        """The eval's id, settings and judge."""
        return self.root / "eval.json"

    @property
    def checkpoints(self) -> Path:
        """The default checkpoint store of the research runs."""
        return self.root / "checkpoints.sqlite"

    @property
    def summary_json(self) -> Path:
        """The summary as JSON."""
        return self.root / "summary.json"

    @property
    def summary_md(self) -> Path:
        """The summary as Markdown tables."""
        return self.root / "summary.md"

    def task(self, task_id: int | str) -> Path:
        """The folder of one task."""
        return self.root / "tasks" / str(task_id)

    def result_files(self) -> list[Path]:
        """Every finished task's result.json."""
        return sorted((self.root / "tasks").glob("*/result.json"))
