"""Benchmark the citation check over statement/source pairs with known truth, in every language.

    python bench/bench_citations.py
    python bench/bench_citations.py --base-url http://127.0.0.1:8080/v1 --model M --per-language 3

One report per language (each pair one cited statement, the question in that language) goes
through the real `verify_citations` node, whose reviewer is the stand-in model answering as a
careful judge from the known truth. Prints, per language, the share of true citations kept and
of false ones kept, and how many pairs each method (close match, model) settled. The stand-in
judge is right by construction: what this measures is everything around it (the lexical
shortcut, batching, pair numbering, fallbacks, rewrites and their checks). With `--base-url`
the judge is a real OpenAI-compatible server instead, and the figures measure that model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.domain.markup import ids_in  # noqa: E402
from deep_research.nodes.verifying import verify_citations  # noqa: E402
from deep_research.settings import Settings  # noqa: E402
from deep_research.state import SourceEvidence, WorkerResult  # noqa: E402
from deep_research.tools.run_resources import LiveRuns  # noqa: E402

from citation_pairs import PAIRS, QUESTIONS, SOURCES, Pair, truth  # noqa: E402
from stand_ins.chat import ChatServer  # noqa: E402


def report_of(pairs: list[Pair]) -> str:
    """A report with one paragraph per pair: the statement citing its source."""
    return "# Report\n\n" + "\n\n".join(f"{p.statement} [{p.source}]" for p in pairs) + "\n"


def kept(report: str, pair: Pair, index: int) -> bool:
    """True when the pair's statement is still in the report and still cites its source."""
    paragraph = report.split("\n\n")[index + 1]
    return paragraph.startswith(pair.statement.rstrip(".。")) and pair.source in ids_in(paragraph)


async def check(language: str, pairs: list[Pair], settings: Settings) -> dict:
    """Verify one language's report and compare what survived with the truth."""
    sources = [
        SourceEvidence(id=n, url=f"https://example.org/{n}", title=f"Source {n}", excerpt=text)
        for n, text in SOURCES.items()
    ]
    state = {
        "question": QUESTIONS[language],
        "report": report_of(pairs),
        "worker_results": [WorkerResult(subtask_id=1, sources=sources)],
        "settings": settings,
        "run_id": f"bench-citations-{language}",
    }
    out = await verify_citations(state, runs=LiveRuns())
    kept_flags = [kept(out["report"], p, i) for i, p in enumerate(pairs)]
    first = [c for c in out["citations"] if not c.rewrite]
    lexical = [(c, p) for c, p in zip(first, pairs, strict=True) if c.method == "lexical"]
    return {
        "true": sum(p.true for p in pairs),
        "false": sum(not p.true for p in pairs),
        "true_kept": sum(k for k, p in zip(kept_flags, pairs, strict=True) if p.true),
        "false_kept": sum(k for k, p in zip(kept_flags, pairs, strict=True) if not p.true),
        "methods": Counter(c.method for c in first),
        "lexical_wrong": sum((c.verdict == "supported") != p.true for c, p in lexical),
        "rewrites_checked": sum(c.rewrite for c in out["citations"]),
        "model_calls": out["usage"].llm_calls,
    }


def forget_every_fourth(text: str, call) -> str:
    """A batch reply without every 4th verdict (replies about one pair are left whole)."""
    if call.contract != "PairVerdicts":
        return text
    reply = json.loads(text)
    if len(reply["verdicts"]) > 1:
        reply["verdicts"] = [v for n, v in enumerate(reply["verdicts"], 1) if n % 4]
    return json.dumps(reply)


def share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="a real OpenAI-compatible server to judge the pairs")
    parser.add_argument("--model", default="stand-in", help="its model name")
    parser.add_argument("--per-language", type=int, help="at most this many pairs per language")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per model call")
    parser.add_argument(
        "--forgetful",
        action="store_true",
        help="the stand-in judge leaves every 4th pair of a batch out of its reply, as real "
        "models do in long batches",
    )
    parser.add_argument(
        "--structured-output", default="auto", help="auto, json_schema, tool_calling or prompt"
    )
    args = parser.parse_args()
    chat = None if args.base_url else ChatServer().start()
    if chat:
        chat.brain.judge = truth
        if args.forgetful:
            chat.reply_wrapper = forget_every_fourth
    os.environ.update(
        OPENAI_BASE_URL=args.base_url or f"{chat.url}/v1",
        OPENAI_API_KEY=os.environ.get("OPENAI_API_KEY", "bench"),
        DEEP_RESEARCH_MODEL=args.model,
    )
    settings = Settings(
        model_retries=0,
        search_timeout=args.timeout,
        max_context_tokens=8000,
        structured_output=args.structured_output,
    )
    languages = list(dict.fromkeys(p.language for p in PAIRS))
    chosen = [
        p
        for language in languages
        for p in [q for q in PAIRS if q.language == language][: args.per_language]
    ]
    rows, total = [], Counter()
    try:
        for language in languages:
            pairs = [p for p in chosen if p.language == language]
            try:
                figures = asyncio.run(check(language, pairs, settings))
            except Exception as error:  # a real server that fails: say so, go on
                print(f"{language}: the check failed: {type(error).__name__}: {error}")
                continue
            rows.append((language, figures))
            for key in ("true", "false", "true_kept", "false_kept", "lexical_wrong"):
                total[key] += figures[key]
            for key in ("rewrites_checked", "model_calls"):
                total[key] += figures[key]
            total.update({f"m_{k}": v for k, v in figures["methods"].items()})
    finally:
        if chat:
            chat.stop()
    judge = f"{args.model} at {args.base_url}" if args.base_url else "the careful stand-in judge"
    print(f"{len(chosen)} pairs, {total['true']} true and {total['false']} false; judge: {judge}\n")
    print("| language | pairs | true kept | false kept | close match | model | model calls |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for language, f in rows:
        print(
            f"| {language} | {f['true'] + f['false']} | "
            f"{share(f['true_kept'], f['true'])} ({f['true_kept']}/{f['true']}) | "
            f"{share(f['false_kept'], f['false'])} ({f['false_kept']}/{f['false']}) | "
            f"{f['methods']['lexical']} | {f['methods']['model']} | {f['model_calls']} |"
        )
    print(
        f"| all | {len(chosen)} | {share(total['true_kept'], total['true'])} | "
        f"{share(total['false_kept'], total['false'])} | {total['m_lexical']} | "
        f"{total['m_model']} | {total['model_calls']} |"
    )
    print(
        f"\nclose-match verdicts that disagree with the truth: {total['lexical_wrong']}; "
        f"pairs without a verdict: {total['m_fallback']}; rewrites checked: "
        f"{total['rewrites_checked']}; rewrites the judge had no truth for (it supports only "
        f"a verbatim quote): {len(chat.brain.unknown_pairs) if chat else '-'}"
    )


if __name__ == "__main__":
    main()
