"""A finished run's output as the graph leaves it, with everything an export must handle.

Headings, a list, a table, inline code, citations checked by both methods, a rewrite, a statement
marked unsupported, one marked unchecked, a hostile source title and URL, Chinese and Arabic text.
"""

from __future__ import annotations

from datetime import UTC, datetime

from deep_research.export.facts import RunFacts
from deep_research.state import CitationCheck, QualityAssessment, QualityDimensions, Source, Usage

HOSTILE_TITLE = '<script>document.title="pwned"</script><img src=x onerror="document.title+=1">'
QUESTION = "How do zstd and xz compare for log archives?"

REPORT = f"""# {QUESTION}

## Summary

Zstandard decompresses several times faster than xz [1]. xz reaches a higher ratio on text \
logs [2][3].

## Details

- Level 19 of zstd comes close to xz on ratio [2].
- `zstd --long` widens the window for large archives [1].
- Memory use of xz at level 9 is about 674 MiB [4].

| tool | strength | source |
| --- | --- | --- |
| zstd | speed | fast decoding [1] |
| xz | ratio | best ratio [3] |

A claim nothing supported. *(not supported by the sources found)*

A claim nobody could check. *(citation could not be checked)*

### 中文与العربية

压缩日志时，zstd 的解压速度明显更快 [5]。

ضغط السجلات أسرع باستخدام zstd [5].

## Sources

- [1] Zstandard manual — https://facebook.github.io/zstd/
- [2] Benchmarks — https://example.org/bench
- [3] {HOSTILE_TITLE} — https://example.net/xz
- [4] xz man page — https://tukaani.org/xz/
- [5] 压缩对比 — https://example.cn/zstd
"""

SOURCES = [
    Source(id=11, number=1, url="https://facebook.github.io/zstd/", title="Zstandard manual"),
    Source(id=12, number=2, url="https://example.org/bench", title="Benchmarks"),
    Source(id=13, number=3, url="https://example.net/xz", title=HOSTILE_TITLE),
    Source(id=14, number=4, url="javascript:alert(2)", title="xz man page"),
    Source(id=15, number=5, url="https://example.cn/zstd", title="压缩对比"),
]


def _check(statement: str, source_id: int, verdict="supported", quote="", method="model"):
    return CitationCheck(
        statement=statement, source_id=source_id, verdict=verdict, evidence=quote, method=method
    )


CHECKS = [
    _check(
        "Zstandard decompresses several times faster than xz.",
        11,
        quote="decompression speed is several times that of xz",
        method="lexical",
    ),
    _check(
        "xz reaches a higher ratio on text logs.",
        12,
        "partial",
        "xz wins on ratio for most text corpora",
    ),
    _check("xz reaches a higher ratio on text logs.", 13, quote='<b>ratio</b> "best" & <i>xz</i>'),
    _check("xz reaches a higher ratio on text logs.", 14, "unsupported", "unrelated"),
    _check("Level 19 of zstd comes close to xz on ratio.", 12, quote="level 19 nearly matches"),
    _check("`zstd --long` widens the window for large archives.", 11, quote="--long=31"),
    _check("Memory use of xz at level 9 is about 674 MiB.", 14, quote="674 MiB of memory"),
    _check("zstd | speed | fast decoding", 11, quote="fast decoding"),
    _check("xz | ratio | best ratio", 13, quote="best ratio"),
    _check("A claim nothing supported.", 12, "unsupported", ""),
    _check("A claim nobody could check.", 12, "unsupported", "", method="fallback"),
    _check("压缩日志时，zstd 的解压速度明显更快。", 15, quote="zstd 解压速度更快"),
    _check("ضغط السجلات أسرع باستخدام zstd.", 15, quote="zstd أسرع"),
]


def sample_output() -> dict:
    """The `ResearchOutput` of a finished run."""
    dims = QualityDimensions(
        completeness=80, accuracy=85, depth=70, structure=90, readability=85, source_quality=80
    )
    quality = QualityAssessment(
        score=82, dimensions=dims, issues=[], another_round_worthwhile=False
    )
    return {
        "report": REPORT,
        "sources": SOURCES,
        "quality": quality,
        "iteration": 2,
        "usage": Usage(llm_calls=9, input_tokens=12000, output_tokens=3000),
        "cost_usd": 0.0123,
        "citations": CHECKS,
        "citation_precision": 0.8,
        "stop_reason": "quality_threshold",
        "report_problem": "",
        "structured_output": {"m": "json_schema"},
    }


def sample_facts() -> RunFacts:
    """The header facts of the sample run."""
    return RunFacts(
        question=QUESTION,
        finished=datetime(2026, 12, 1, 15, 30, tzinfo=UTC),
        model="qwen-plus",
        rounds=2,
        stop_reason="quality_threshold",
        cost_usd=0.0123,
        quality=82,
        citation_precision=0.8,
        thread_id="sample",
    )
