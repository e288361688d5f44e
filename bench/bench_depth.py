"""Benchmark research depth: planted facts that reach the final report, cited (issue 36).

    python bench/bench_depth.py [--configs default,thorough,local] [--json FILE] [--keep DIR]

An offline world on loopback (`tests/stand_ins/depth_world/`): four materials, each with figures
in an article's body past its snippet, in a table cell, two and three links deep (behind a
"related pages" list of 24 links), in a linked PDF, and on eight small trial pages (32 sources);
two figures on which two sources disagree, two stale 2021 figures with a newer 2024 page, two
near namesakes with figures of their own. A stand-in model that is kind to nobody (it follows
the tools it is offered by their schemas, quotes pages word for word and writes what it is
shown) answers every model call. Each configuration runs the whole graph twice through the real
clients: the English question over the whole world, and a Chinese question about one material
over the English pages. It prints one table, configurations side by side.

Configurations: `default` (the settings as shipped), `thorough` (what a demanding user picks:
`THOROUGH`) and `local` (the profile for one local server, `local_model`: an 8,192-token context,
where the gathered evidence no longer fits one prompt).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.graph import build_graph  # noqa: E402

from stand_ins.chat import ChatServer  # noqa: E402
from stand_ins.depth_world import score  # noqa: E402
from stand_ins.depth_world.brain import WorldBrain  # noqa: E402
from stand_ins.depth_world.facts import KINDS, SUBJECTS, Fact, figure_pattern, planted  # noqa: E402
from stand_ins.depth_world.servers import WorldSearch, WorldSite  # noqa: E402

QUESTION = (
    "What has been measured about the Quillon alloy, the Veltrane polymer, the Mortisk "
    "ceramic and the Zerapine resin? Give each figure with its source, and say where sources "
    "disagree or a figure is out of date."
)
QUESTION_ZH = (
    "Zerapine 树脂有哪些测量数据？请给出每个数值及其来源，并指出来源之间不一致或过时的数值。"
)
ZH_SUBJECT = "Zerapine resin"
THOROUGH = {
    "min_iterations": 3,
    "quality_threshold": 90,
    "max_queries": 8,
    "max_cycles": 4,
    # no `max_pages`: it raised a worker's pages above complex's 8 when pages came by
    # complexity; now that workers draw their pages from `max_page_fetches`, it would cap them
    "max_results": 10,
    "max_page_fetches": 100,
    "max_supplementary_tasks": 5,
    "report_length": "long",
}
LOCAL = {"local_model": True}  # the profile for one slow local server: an 8,192-token context
CONFIGURATIONS = {"default": {}, "thorough": THOROUGH, "local": LOCAL}
WORLD = {  # what every run needs to live in the world: not a choice of the user's
    "search_backend": "tavily",
    "fetch_private_addresses": True,  # the world is on loopback
}
NEWER_YEAR = 2024  # the year of the pages that replace the stale ones


def writer_prompts(chat: ChatServer) -> str:
    """Every section writer's prompt of the run, as one text."""
    texts = []
    for request in chat.chat_requests:
        messages = request["body"].get("messages", [])
        text = "\n".join(str(m.get("content")) for m in messages)
        if "one section of a research report" in text:
            texts.append(text)
    return "\n".join(texts)


def seen_by_engine(site: WorldSite, search: WorldSearch) -> tuple[set[str], str]:
    """The paths the engine read, and the snippets search showed it (as one text)."""
    shown = []
    for _, urls in search.returned:
        for url in urls:
            page = site.pages.get(urlsplit(url).path)
            if page is not None:
                shown.append(page.lead)
    return set(site.served), "\n".join(shown)


async def one_run(question: str, extra: dict, workdir: Path) -> dict:
    """One whole run in a fresh world: the report, sources, usage and what the world saw."""
    site = WorldSite().start()
    search = WorldSearch(site.url).start()
    brain = WorldBrain()
    chat = ChatServer(brain).start()  # type: ignore[arg-type]
    os.environ.update(
        OPENAI_BASE_URL=f"{chat.url}/v1",
        OPENAI_API_KEY="sk-bench",
        TAVILY_API_BASE_URL=search.url,
        TAVILY_API_KEY="tvly-bench",
        DEEP_RESEARCH_MODEL="stand-in",
        XDG_DATA_HOME=str(workdir / "xdg"),
    )
    started = time.perf_counter()
    try:
        result = await build_graph().ainvoke({"question": question, "settings": {**WORLD, **extra}})
        prompts = writer_prompts(chat)
    finally:
        for stand_in in (chat, search, site):
            stand_in.stop()
    served, snippets = seen_by_engine(site, search)
    return {
        "result": result,
        "prompts": prompts,
        "served": served,
        "snippets": snippets,
        "seconds": time.perf_counter() - started,
        "unknown": brain.unknown,
    }


def seen(fact: Fact, run: dict) -> bool:
    """The engine was shown the fact: it read its page, or a snippet showed the figure."""
    return fact.path in run["served"] or bool(figure_pattern(fact.token).search(run["snippets"]))


def count(facts: list[Fact], test) -> str:
    return f"{sum(map(test, facts))}/{len(facts)}"


def measure(run: dict, facts: list[Fact]) -> dict:
    """The row of one run: per kind found in the report (and in writer prompts, and seen),
    disagreements, stale and near-miss figures, and costs."""
    result = run["result"]
    numbers = score.cited_paths(result["sources"])
    report_units = score.units(result["report"], numbers)
    row: dict[str, object] = {}
    for kind in KINDS:
        of_kind = [f for f in facts if f.kind == kind]
        if not of_kind:
            continue
        row[f"{kind}: in report, cited"] = count(of_kind, lambda f: score.found(f, report_units))
        row[f"{kind}: in writer prompts"] = count(
            of_kind, lambda f: bool(figure_pattern(f.token).search(run["prompts"]))
        )
        row[f"{kind}: seen by the engine"] = count(of_kind, lambda f: seen(f, run))
    pairs: dict[str, list[Fact]] = {}
    for fact in facts:
        if fact.kind in ("disagree", "stale", "current"):
            pairs.setdefault(f"{fact.kind == 'disagree'}{fact.pair}", []).append(fact)
    disagreements = [p for p in pairs.values() if p[0].kind == "disagree"]
    stale = [p for p in pairs.values() if p[0].kind != "disagree"]
    if disagreements:
        stated = sum(
            score.stated_disagreement(a, b, report_units, numbers) for a, b in disagreements
        )
        row["disagreements stated, both cited"] = f"{stated}/{len(disagreements)}"
    if stale:
        olds = [
            (next(f for f in p if f.kind == "stale"), next(f for f in p if f.kind == "current"))
            for p in stale
        ]
        shown = sum(score.presented_as_current(o, n, NEWER_YEAR, report_units) for o, n in olds)
        row["stale figures presented as current"] = f"{shown}/{len(olds)}"
        row["newer figures in report, cited"] = count(
            [n for _, n in olds], lambda f: score.found(f, report_units)
        )
    near = [f for f in facts if f.kind == "near_miss"]
    if near:
        row["near-miss figures leaked"] = count(near, lambda f: score.leaked(f, report_units))
    usage = result["usage"]
    row |= {
        "pages read": len({p for p in run["served"]}),
        "model calls": usage.llm_calls,
        "tokens": usage.total_tokens,
        "searches": usage.search_calls,
        "rounds": result.get("iteration"),
        "citation precision": result.get("citation_precision"),
        "seconds": round(run["seconds"], 1),
    }
    if run["unknown"]:
        row["CONTRACTS WITHOUT A HANDLER"] = ", ".join(sorted(set(run["unknown"])))
    return row


def table(columns: dict[str, dict]) -> str:
    """Rows of figures, one column per configuration."""
    names = list(columns)
    keys = list(dict.fromkeys(k for column in columns.values() for k in column))
    width = max(len(k) for k in keys) + 2
    cells = {k: [str(columns[n].get(k, "")) for n in names] for k in keys}
    col = max(len(c) for c in [*names, *(x for line in cells.values() for x in line)]) + 2
    lines = ["".ljust(width) + "".join(n.rjust(col) for n in names)]
    lines += [k.ljust(width) + "".join(c.rjust(col) for c in cells[k]) for k in keys]
    return "\n".join(lines)


async def measure_configuration(name: str, extra: dict, workdir: Path, keep: Path | None) -> dict:
    """Both questions under one configuration: one column of the table."""
    main = await one_run(QUESTION, extra, workdir / name / "en")
    column = measure(main, planted())
    chinese = await one_run(QUESTION_ZH, extra, workdir / name / "zh")
    zh_facts = [f for f in planted(tuple(s for s in SUBJECTS if s.name == ZH_SUBJECT))
                if f.kind in KINDS]  # fmt: skip
    zh_units = score.units(
        chinese["result"]["report"], score.cited_paths(chinese["result"]["sources"])
    )
    column["Chinese question: facts in report, cited"] = count(
        zh_facts, lambda f: score.found(f, zh_units)
    )
    column["Chinese question: seen by the engine"] = count(zh_facts, lambda f: seen(f, chinese))
    column["Chinese question: model calls / tokens"] = (
        f"{chinese['result']['usage'].llm_calls} / {chinese['result']['usage'].total_tokens}"
    )
    if chinese["unknown"]:
        column["CONTRACTS WITHOUT A HANDLER (zh)"] = ", ".join(sorted(set(chinese["unknown"])))
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{name}-en.md").write_text(main["result"]["report"])
        (keep / f"{name}-zh.md").write_text(chinese["result"]["report"])
    return column


async def main() -> None:
    """Run the configurations and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--configs",
        default="default,thorough,local",
        help="comma-separated: default, thorough, local",
    )
    parser.add_argument("--json", type=Path, help="also write the table as JSON")
    parser.add_argument("--keep", type=Path, help="write each run's report into this folder")
    args = parser.parse_args()
    os.environ.pop("DEEP_RESEARCH_WORKER_TOOLS", None)  # the settings as shipped, not as overridden
    columns = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in args.configs.split(","):
            columns[name] = await measure_configuration(
                name, CONFIGURATIONS[name], Path(folder), args.keep
            )
    print(table(columns))
    if args.json:
        args.json.write_text(json.dumps(columns, indent=2, default=str))


if __name__ == "__main__":
    asyncio.run(main())
