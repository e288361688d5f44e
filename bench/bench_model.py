"""One research against any OpenAI-compatible endpoint: per-role calls, tokens, seconds, retries.

    OPENAI_BASE_URL=http://127.0.0.1:8011/v1 DEEP_RESEARCH_MODEL=gemma-3-270m \\
        python bench/bench_model.py [--corpus DIR] [--local-model] [--rounds 1]

The figure a user wants before choosing a local model: for each role, the calls it made, the
tokens in and out, seconds per call, the structured-output method its replies came by, the
retries (and of those, calls that had streamed tokens before failing), the re-asks of broken
or degenerate replies, and the prompts resent shorter. Searches a small folder of documents it
writes (or `--corpus`), so no search key is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deep_research.graph import build_graph  # noqa: E402
from deep_research.settings import ROLES  # noqa: E402
from deep_research.tools.local_profile import is_loopback  # noqa: E402
from deep_research.tools.model_names import openai_base_url  # noqa: E402
from deep_research.tools.run_resources import LiveRuns  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from stand_ins.documents import LOG_ARCHIVES as CORPUS  # noqa: E402
from stand_ins.documents import LOG_ARCHIVES_QUESTION as QUESTION  # noqa: E402


async def research(settings: dict) -> tuple[dict, object, float]:
    """One run; its output, its call figures, and its wall time."""
    started = time.monotonic()
    runs = LiveRuns()
    output = await build_graph(runs=runs).ainvoke({"question": QUESTION, "settings": settings})
    return output, runs.last_released.stats, time.monotonic() - started


def table(output: dict, stats, seconds: float) -> list[str]:
    """The per-role figures as a Markdown table, then the run's outcome."""
    lines = [
        "| role | calls | tokens in / out | s per call | method | retries (after output) "
        "| re-asks | degenerate | shrunk |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    by_role = output["usage"].by_role
    for role in ROLES:
        calls, usage = stats.roles.get(role), by_role.get(role)
        if calls is None or not calls.calls:
            continue
        method = calls.methods.most_common(1)[0][0] if calls.methods else "prose"
        tokens = f"{usage.input_tokens:,} / {usage.output_tokens:,}" if usage else "-"
        lines.append(
            f"| {role} | {calls.calls} | {tokens} | {calls.seconds / calls.calls:.1f} | {method} "
            f"| {calls.retries} ({calls.retries_after_output}) | {calls.reasks} "
            f"| {calls.degenerate} | {calls.shrunk} |"
        )
    quality = output.get("quality")
    lines += [
        "",
        f"wall time {seconds:.0f} s; stop reason {output['stop_reason']}; "
        f"quality {'unknown' if quality is None else f'{quality.score:g}'}; "
        f"sources cited {len(output['sources'])}; settled {output.get('structured_output')}; "
        f"report problem: {output.get('report_problem') or 'none'}",
    ]
    return lines


def main() -> None:
    """Parse the arguments, run once, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="a folder of documents (default: two notes)")
    parser.add_argument("--rounds", type=int, default=1, help="research rounds (default 1)")
    parser.add_argument("--local-model", action="store_true", help="the local-model profile")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        corpus = args.corpus or Path(folder)
        if not args.corpus:
            for name, text in CORPUS.items():
                (corpus / name).write_text(text, encoding="utf-8")
        settings = {
            "search_backend": "local",
            "corpus_dir": str(corpus.resolve()),
            "max_iterations": args.rounds,
            "min_iterations": args.rounds,
            "local_model": args.local_model or is_loopback(openai_base_url()),
        }
        output, stats, seconds = asyncio.run(research(settings))
    print("\n".join(table(output, stats, seconds)))


if __name__ == "__main__":
    main()
