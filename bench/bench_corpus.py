"""Benchmark the local-documents index: build, refresh and query times on a generated folder.

Run `python bench/bench_corpus.py --files 2000 --queries 200` (or `python -m bench.bench_corpus`).
The folder (mostly Markdown and text, some HTML and RST, a few PDFs, ~5% Chinese) and the
index are created in a temporary directory and removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.tools.corpus import LocalCorpus  # noqa: E402

from stand_ins.documents import make_pdf  # noqa: E402

SYLLABLES = [
    "ka",
    "ri",
    "to",
    "ne",
    "mo",
    "sa",
    "lu",
    "vi",
    "en",
    "or",
    "ex",
    "al",
    "in",
    "st",
    "ch",
    "th",
    "qu",
    "ba",
    "de",
    "fi",
    "go",
    "hu",
    "ja",
]
TECH = [
    "index",
    "search",
    "query",
    "latency",
    "cache",
    "thread",
    "async",
    "python",
    "sqlite",
    "passage",
    "heading",
    "install",
    "linux",
    "windows",
    "network",
    "server",
    "client",
    "token",
    "ranking",
    "vector",
    "embedding",
    "parser",
    "document",
    "folder",
    "release",
    "version",
    "config",
    "deploy",
    "docker",
    "kubernetes",
    "memory",
    "storage",
    "backup",
    "error",
]
CHINESE = [
    "数据",
    "索引",
    "检索",
    "文档",
    "系统",
    "用户",
    "网络",
    "服务",
    "配置",
    "安装",
    "性能",
    "缓存",
    "模型",
    "搜索",
    "结果",
    "分析",
]


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    """Pseudo-words plus technical terms, in an order that Zipf weights then favour."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    ordered = TECH + sorted(words)
    rng.shuffle(ordered)
    return ordered


class Writer:
    """Random prose from a Zipf-weighted vocabulary, English-like or Chinese."""

    def __init__(self, rng: random.Random) -> None:
        """Seeded generator with its own vocabulary and weights."""
        self.rng = rng
        self.words = vocabulary(rng)
        self.weights = [1 / rank for rank in range(1, len(self.words) + 1)]

    def sentence(self, chinese: bool = False) -> str:
        """One sentence of 6-18 words (or Chinese words run together)."""
        if chinese:
            return "".join(self.rng.choices(CHINESE, k=self.rng.randint(6, 14))) + "。"
        words = self.rng.choices(self.words, self.weights, k=self.rng.randint(6, 18))
        return " ".join(words).capitalize() + "."

    def paragraph(self, chinese: bool = False) -> str:
        """Three to eight sentences."""
        return " ".join(self.sentence(chinese) for _ in range(self.rng.randint(3, 8)))

    def title(self) -> str:
        """A two-to-four-word heading."""
        return " ".join(self.rng.choices(self.words[:300], k=self.rng.randint(2, 4))).title()


def markdown(writer: Writer, chinese: bool) -> str:
    """A Markdown file with nested headings."""
    parts = [f"# {writer.title()}", writer.paragraph(chinese)]
    for _ in range(writer.rng.randint(1, 4)):
        parts += [f"## {writer.title()}", writer.paragraph(chinese)]
        for _ in range(writer.rng.randint(0, 2)):
            parts += [f"### {writer.title()}", writer.paragraph(chinese), writer.paragraph(chinese)]
    return "\n\n".join(parts) + "\n"


def text(writer: Writer, chinese: bool) -> str:
    """A plain text file of a few paragraphs."""
    return "\n\n".join(writer.paragraph(chinese) for _ in range(writer.rng.randint(2, 6))) + "\n"


def rst(writer: Writer, chinese: bool) -> str:
    """A reStructuredText file with underlined titles."""
    title = writer.title()
    parts = [f"{title}\n{'=' * len(title)}", writer.paragraph(chinese)]
    for _ in range(writer.rng.randint(1, 3)):
        section = writer.title()
        parts += [f"{section}\n{'-' * len(section)}", writer.paragraph(chinese)]
    return "\n\n".join(parts) + "\n"


def html(writer: Writer, chinese: bool) -> str:
    """An HTML page with navigation, a script, and h1/h2 sections."""
    body = [f"<h1>{writer.title()}</h1><p>{writer.paragraph(chinese)}</p>"]
    for _ in range(writer.rng.randint(1, 4)):
        body.append(f"<h2>{writer.title()}</h2><p>{writer.paragraph(chinese)}</p>")
    return (
        f"<html><head><title>{writer.title()}</title><script>var x = 1;</script></head>"
        f"<body><nav><a href='/'>Home</a></nav>{''.join(body)}</body></html>"
    )


def pdf(writer: Writer, pages: int = 3) -> bytes:
    """A real PDF of `pages` pages of generated sentences."""
    return make_pdf(["\n".join(writer.sentence() for _ in range(20)) for _ in range(pages)])


def generate(folder: Path, count: int, seed: int = 7) -> Counter[str]:
    """Write `count` mixed documents into nested subfolders; how many of each kind."""
    rng = random.Random(seed)
    writer = Writer(rng)
    kinds: Counter[str] = Counter()
    pdf_every = max(count // 20, 1)
    makers: list[tuple[str, Callable[[Writer, bool], str], float]] = [
        ("md", markdown, 0.65),
        ("txt", text, 0.2),
        ("html", html, 0.1),
        ("rst", rst, 0.05),
    ]
    for number in range(count):
        directory = folder / f"area{number % 10}" / f"topic{number % 37}"
        directory.mkdir(parents=True, exist_ok=True)
        if number % pdf_every == pdf_every - 1 and kinds["pdf"] < 20:
            (directory / f"doc{number}.pdf").write_bytes(pdf(writer))
            kinds["pdf"] += 1
            continue
        suffix, make, _ = rng.choices(makers, [weight for *_, weight in makers])[0]
        chinese = rng.random() < 0.05
        (directory / f"doc{number}.{suffix}").write_text(make(writer, chinese), encoding="utf-8")
        kinds[suffix] += 1
    return kinds


def queries(count: int, seed: int = 11) -> list[str]:
    """Search queries of one to four words, about one in ten Chinese."""
    rng = random.Random(seed)
    words = vocabulary(random.Random(7))[:600] + TECH
    result = []
    for _ in range(count):
        if rng.random() < 0.1:
            result.append(" ".join(rng.sample(CHINESE, rng.randint(1, 2))))
        else:
            result.append(" ".join(rng.sample(words, rng.randint(1, 4))))
    return result


def touch(folder: Path, share: float, seed: int = 3) -> int:
    """Change a share of all files (text appended, PDFs re-stamped); how many changed."""
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    chosen = random.Random(seed).sample(files, max(1, int(len(files) * share)))
    for path in chosen:
        if path.suffix == ".pdf":
            stamp = path.stat().st_mtime_ns + 1_000_000_000
            os.utime(path, ns=(stamp, stamp))
            continue
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\nAppended by the benchmark.\n")
    return len(chosen)


def main() -> None:
    """Generate the folder, then time build, refreshes and queries, and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000, help="documents to generate")
    parser.add_argument("--queries", type=int, default=200, help="queries to time")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as temp:
        folder, index = Path(temp, "corpus"), Path(temp, "index", "corpus.sqlite")
        started = time.perf_counter()
        kinds = generate(folder, args.files)
        corpus_bytes = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        print(f"generated:          {args.files} files in {time.perf_counter() - started:.1f} s")
        print(f"  kinds:            {', '.join(f'{k} {n}' for k, n in kinds.most_common())}")
        print(f"  corpus size:      {corpus_bytes:,} bytes")

        corpus = LocalCorpus(folder, index)
        built = corpus.refresh()
        print(
            f"full build:         {built.seconds:.2f} s ({args.files / built.seconds:,.0f} files/s)"
        )
        languages = corpus.languages()
        named = ", ".join(f"{code} {n}" for code, n in languages.items())
        print(f"  documents:        {sum(languages.values())} (skipped {built.files_skipped})")
        print(f"  languages:        {named}")
        print(f"  passages:         {built.passages}")
        print(f"  index size:       {os.path.getsize(index):,} bytes")

        same = corpus.refresh()
        print(f"no-change refresh:  {same.seconds * 1000:.1f} ms")
        changed = touch(folder, 0.01)
        again = corpus.refresh()
        print(
            f"incremental:        {again.seconds * 1000:.1f} ms after touching {changed} files "
            f"(updated {again.files_updated}, added {again.files_added})"
        )

        latencies, empty = [], 0
        for query in queries(args.queries):
            started = time.perf_counter()
            hits = corpus.search(query, max_results=5)
            latencies.append((time.perf_counter() - started) * 1000)
            empty += not hits
        cuts = statistics.quantiles(latencies, n=100)
        print(
            f"query latency:      p50 {cuts[49]:.2f} ms, p95 {cuts[94]:.2f} ms, "
            f"max {max(latencies):.2f} ms over {len(latencies)} queries "
            f"({empty} without hits)"
        )


if __name__ == "__main__":
    main()
