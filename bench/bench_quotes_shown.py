"""How many of a report's kept citations the HTML export shows with their evidence quote.

    python bench/bench_quotes_shown.py

A report written the way small models write (paragraphs of several lines without a full stop,
each line citing its own source; sentences in mid-paragraph) goes through the real
`verify_citations` and `finalize` steps, then the HTML export. The reviewer is the in-process
stand-in judging each pair from a truth table: a statement is supported by a source when every
claim in it is, partly when some are, not at all otherwise; a statement left with no support is
rewritten from what its sources say (several sentences, as a writer answers for several lines;
one without its full stop), or has nothing to say and is marked. Every `[n]` the final report
keeps was checked and kept with a quote, so the export should show a quote for each; the figure
is how many it finds (the check and the export must split the report into the same statements).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_chat_models import BrainModel  # noqa: E402

from deep_research.export.document import build_document  # noqa: E402
from deep_research.export.facts import facts_of  # noqa: E402
from deep_research.nodes.verifying import verify_citations  # noqa: E402
from deep_research.nodes.writing import finalize  # noqa: E402
from deep_research.settings import Settings  # noqa: E402
from deep_research.state import SourceEvidence, WorkerResult  # noqa: E402
from deep_research.tools.run_resources import LiveRuns  # noqa: E402

from stand_ins.chat import Brain, ChatCall  # noqa: E402

SOURCES = {
    1: "Zstandard decompresses at more than 1 GB/s. Level 3 compresses about 300 MB/s per core. "
    "Long mode improves the ratio on large archives. Dictionaries help many small files.",
    2: "xz reaches the best ratio on text logs. xz decompresses at about 100 MB/s. "
    "xz has no dictionary support.",
    3: "Debian, Fedora and Arch package both tools.",
    4: "xz -9 needs 674 MiB of memory to compress.",
}
TRUE = {  # claim -> the sources that state it
    "Zstandard decompresses at more than 1 GB/s": {1},
    "zstd decompresses faster than 1 GB/s": {1},
    "Level 3 compresses about 300 MB/s per core": {1},
    "long mode helps large archives": {1},
    "dictionaries help with many small logs": {1},
    "xz reaches the best ratio on text logs": {2},
    "xz decompresses at about 100 MB/s": {2},
    "xz has no dictionary support": {2},
    "Debian, Fedora and Arch package both tools": {3},
    "xz -9 needs 674 MiB of memory": {4},
    "xz 的压缩率最高": {2},
    "zstd 解压超过 1 GB/s": {1},
}
FALSE = [  # claims no source states
    "Zstandard is ten times faster than xz",
    "xz archives are half the size",
    "Both tools are installed everywhere by default",
    "Multithreaded xz matches zstd on many cores",
    "xz needs no memory",
    "zstd 的压缩率总是最高",
]
REWRITES = {  # the writer's answer for a statement left without support, by its first claim
    "Zstandard is ten times faster than xz": (
        "Zstandard decompresses at more than 1 GB/s [1]. xz decompresses at about 100 MB/s [2]."
    ),
    "Both tools are installed everywhere by default": (
        "Debian, Fedora and Arch package both tools [3]"  # no full stop: mid-paragraph
    ),
    "zstd 的压缩率总是最高": "xz 的压缩率最高 [2]。",
}
REPORT = """# How do zstd and xz compare for log archives?

## Summary

Zstandard is ten times faster than xz [1][2]. xz archives are half the size [2].
Zstandard is ten times faster than xz at every level [1]
xz archives are half the size [2]

## Speed

Level 3 compresses about 300 MB/s per core [1]. Multithreaded xz matches zstd on many cores \
[2]. zstd decompresses faster than 1 GB/s [1].
Zstandard decompresses at more than 1 GB/s [1]
xz decompresses at about 100 MB/s [2]

## Availability

Both tools are installed everywhere by default [3]. xz reaches the best ratio on text logs [2].
Debian, Fedora and Arch package both tools [3]

## Memory and features

xz needs no memory [4]. xz -9 needs 674 MiB of memory [4].
long mode helps large archives [1]
dictionaries help with many small logs [1]
xz has no dictionary support [2]

- dictionaries help with many small logs [1]
- xz has no dictionary support [2]

## 中文

zstd 的压缩率总是最高 [2]
zstd 解压超过 1 GB/s [1]
"""


def judged(statement: str, source_text: str) -> str:
    """supported when every claim of the statement is stated by the source, partial when some
    are, unsupported when none is."""
    number = int(source_text.split("\n", 1)[0].removeprefix("S"))
    claims = [c for c in [*TRUE, *FALSE] if c in statement]
    held = [c for c in claims if number in TRUE.get(c, set())]
    if claims and len(held) == len(claims):
        return "supported"
    return "partial" if held else "unsupported"


class Writer(Brain):
    """The stand-in writer's rewrites: from the table, else nothing (the statement is marked)."""

    def on_StatementRewrites(self, call: ChatCall) -> dict:
        rewrites = []
        for number, statement in _statements(call.user):
            first = next((c for c in REWRITES if statement.startswith(c)), None)
            rewrites.append({"statement": number, "text": REWRITES.get(first, "")})
        return {"rewrites": rewrites}


def _statements(text: str) -> list[tuple[int, str]]:
    """The numbered statements of a rewrite request."""
    found = []
    for line in text.splitlines():
        if line.startswith("Statement ") and ": " in line:
            head, statement = line.split(": ", 1)
            found.append((int(head.removeprefix("Statement ")), statement))
    return found


async def measure() -> tuple[int, int, int]:
    """The final report's citations, those shown with a quote, and the rewrites checked."""
    sources = [
        SourceEvidence(id=n, url=f"https://example.org/{n}", title=f"S{n}", excerpt=text)
        for n, text in SOURCES.items()
    ]
    settings = Settings(model="judge", language="en", structured_output="prompt")
    model = BrainModel(brain=Writer(judge=judged))
    runs = LiveRuns(lambda settings, role: model)
    state = {
        "question": "How do zstd and xz compare for log archives?",
        "report": REPORT,
        "worker_results": [WorkerResult(subtask_id=1, status="ok", sources=sources)],
        "settings": settings,
        "run_id": "bench-quotes",
        "iteration": 1,
        "stop_reason": "max_iterations",
    }
    state |= await verify_citations(state, runs=runs)
    state |= await finalize(state, runs=runs)
    document = build_document(state, facts_of(state))
    shown = sum(1 for c in document.citations if c.check and c.check.evidence)
    rewrites = sum(1 for c in state["citations"] if c.rewrite)
    return len(document.citations), shown, rewrites


def main() -> None:
    cited, shown, rewrites = asyncio.run(measure())
    print(f"citations in the final report: {cited} (rewrite checks: {rewrites})")
    print(f"shown with their evidence quote: {shown} of {cited}")


if __name__ == "__main__":
    main()
