"""Every word a run page can show from the engine's own names has a label in both languages."""

from typing import get_args

import pytest

from deep_research.settings import Complexity
from deep_research.state import StopReason, WorkerStatus
from deep_research.tools.events import WorkerEvent
from deep_research.web.labels import EN, ZH


@pytest.mark.parametrize("labels", [EN, ZH], ids=["en", "zh"])
def test_every_stop_reason_complexity_and_worker_status_is_labelled(labels):
    names = [*get_args(StopReason)]
    names += [f"c_{c}" for c in get_args(Complexity)]
    names += [f"w_{s}" for s in get_args(WorkerStatus)]
    phases = [m.model_fields["phase"].default for m in get_args(get_args(WorkerEvent)[0])]
    names += [f"w_{p}" for p in phases if p != "done"]  # a done worker shows its status
    assert [n for n in names if not labels.get(n)] == []


def test_the_chinese_labels_are_chinese():
    """A key copied across untranslated shows English on a Chinese page."""
    same = {k for k in EN if EN[k] == ZH[k] and any(c.isalpha() for c in EN[k])}
    assert same == set(), same
