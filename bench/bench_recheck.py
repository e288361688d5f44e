"""Benchmark reports that stay true (issue 40): re-checks, stored evidence, a watched question.

    python bench/bench_recheck.py [--pages 20] [--changes 4] [--figures 3] [--filler 60]
                                  [--dynamic 0] [--json FILE]

An offline world on loopback whose pages change between runs (`tests/stand_ins/changing_world`:
static-server pages with ETag and Last-Modified that answer 304 to a matching conditional
request, about 9 kB of text each; `--dynamic` pages send no validators, as many dynamic sites
do; a faithful model). Through the real command line, in this process:
1. a run whose report cites N pages (three claims each); its evidence kept;
2. `recheck` with nothing changed: time, model calls, requests and how many were conditional;
3. k pages changed, in turn a figure edited, a quote removed, a page deleted (404), a page
   unreachable (503); `recheck` again: every claim's expected state against the one found;
4. a second run of the same question: bytes stored per run, and shared between the two;
5. a watched question in a fresh world: m figures edited, `watch --run-due`, and whether the
   change list names exactly the edited figures with their old and new values.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.cli.main import main as cli  # noqa: E402
from deep_research.state import ChangeList, Recheck  # noqa: E402
from deep_research.tools.evidence.store import EvidenceStore  # noqa: E402
from deep_research.tools.watches import WatchStore  # noqa: E402

from stand_ins.changing_world import (  # noqa: E402
    ChangingPages,
    ChangingSearch,
    FaithfulBrain,
    melting,
    opening,
    zeta,
)
from stand_ins.chat import ChatServer  # noqa: E402

QUESTION = "What is measured about these materials?"
KINDS = ("figure edited", "quote removed", "page deleted", "page unreachable")


class World:
    """Pages, search and model on loopback, the environment pointed at them."""

    def __init__(self, pages: int, folder: Path, filler: int = 0, dynamic: int = 0) -> None:
        self.pages = ChangingPages(pages, filler).start()
        for k in range(pages - dynamic, pages):  # the last ones send no validators
            self.pages.pages[self.pages.path(k)].validators = False
        self.search = ChangingSearch(self.pages).start()
        self.chat = ChatServer(FaithfulBrain(topic_count=pages)).start()
        os.environ.update(
            OPENAI_BASE_URL=f"{self.chat.url}/v1",
            OPENAI_API_KEY="sk-bench",
            DEEP_RESEARCH_MODEL="stand-in",
            TAVILY_API_BASE_URL=self.search.url,
            TAVILY_API_KEY="tvly-bench",
            XDG_DATA_HOME=str(folder / "xdg"),
            DEEP_RESEARCH_WORKER_TOOLS="off",
            DEEP_RESEARCH_FETCH_PRIVATE_ADDRESSES="true",  # the operator reads loopback pages
        )
        self.db = str(folder / f"runs-{pages}.sqlite")
        self.flags = [
            "--max-iterations", "1", "--min-iterations", "1", "--fetch-pages", "1",
            "--search", "tavily", "--set", "fetch_private_addresses=true",
            "--set", f"max_subtasks={pages}", "--set", f"max_page_fetches={2 * pages}",
            "--max-workers", "8", "--quiet",
            "--report-length", str(300 * pages),  # room for every page's three claims
            "--checkpoint-db", self.db,
        ]  # fmt: skip

    def stop(self) -> None:
        for server in (self.chat, self.search, self.pages):
            server.stop()

    def run(self, thread: str) -> None:
        assert cli(["run", QUESTION, *self.flags, "--thread-id", thread]) == 0

    def timed(self, argv: list[str]) -> dict:
        """One command: seconds, model calls, page requests (and how many were conditional)."""
        calls, requests = len(self.chat.chat_requests), len(self.pages.requests)
        began = time.perf_counter()
        assert cli([*argv, "--checkpoint-db", self.db]) == 0
        sent = self.pages.requests[requests:]
        return {
            "seconds": round(time.perf_counter() - began, 3),
            "model calls": len(self.chat.chat_requests) - calls,
            "page requests": len(sent),
            "conditional": sum("if-none-match" in r["headers"] for r in sent),
            "answered 304": sum(r["status"] == 304 for r in sent),
        }


def recheck(world: World, folder: Path, name: str) -> tuple[dict, Recheck]:
    """`recheck first`: its figures and its result."""
    out = folder / f"{name}.json"
    figures = world.timed(
        ["recheck", "first", "--json", str(out), "--output", str(folder / "r.md")]
    )
    return figures, Recheck.model_validate_json(out.read_text())


async def cited_pages(db: str, thread: str) -> list[int]:
    """The pages a run's report cites (by their number in the world)."""
    async with EvidenceStore(db) as store:
        return sorted(int(row.read.url.rsplit("/t", 1)[1]) for row in await store.kept(thread))


def change(world: World, k: int, cited: list[int]) -> dict[str, str]:
    """Change k cited pages, a kind in turn; every cited claim's state a correct re-check finds."""
    expected = {}
    for turn, page in enumerate(cited):
        kind = KINDS[turn % 4] if turn < k else ""
        claims = {opening(page): "unchanged", zeta(page): "unchanged", melting(page): "unchanged"}
        if kind == "figure edited":
            world.pages.edit(page, str(7301 + page), str(7301 + page + 1000))
            claims = dict.fromkeys(claims, "quote_kept") | {zeta(page): "quote_gone"}
        elif kind == "quote removed":
            world.pages.remove(page, melting(page))
            claims = dict.fromkeys(claims, "quote_kept") | {melting(page): "quote_gone"}
        elif kind == "page deleted":
            world.pages.delete(page, 404)
            claims = dict.fromkeys(claims, "page_gone")
        elif kind == "page unreachable":
            world.pages.delete(page, 503)
            claims = dict.fromkeys(claims, "unreachable")
        expected |= claims
    return expected


async def stored(db: str) -> dict:
    async with EvidenceStore(db) as store:
        return await store.sizes()


def watched(pages: int, figures: int, folder: Path, filler: int) -> dict:
    """A watched question's second version after `figures` figures were edited."""
    world = World(pages, folder / "watch", filler)
    try:
        world.run("first")
        assert cli(["watch", "first", "--every", "7d", "--checkpoint-db", world.db]) == 0
        edited = set()
        for page in asyncio.run(cited_pages(world.db, "first"))[:figures]:
            old, new = str(1200 + 10 * page), str(1200 + 10 * page + 5)
            world.pages.edit(page, f"{old} kelvin", f"{new} kelvin")
            edited.add((old, new, world.pages.page_url(page)))

        async def due() -> None:
            async with WatchStore(world.db) as watches:
                await watches.tables.run("UPDATE watches SET next_due = 0")

        asyncio.run(due())
        figures_of_run = world.timed(["watch", "--run-due"])

        async def changes() -> ChangeList:
            async with WatchStore(world.db) as watches:
                return ChangeList.model_validate_json((await watches.versions("first"))[0].changes)

        found = asyncio.run(changes())
    finally:
        world.stop()
    named = {
        (f.old_value, f.new_value, f.new.sources[0][1])
        for f in found.changed_figures
        if [url for _, url in f.old.sources] == [url for _, url in f.new.sources]
    }
    return figures_of_run | {
        "figures edited": len(edited),
        "figures named": len(found.changed_figures),
        "named exactly the edited ones": named == edited,
        "other changes listed": len(found.new_findings) + len(found.no_longer_supported),
        "change-list model calls": found.model_calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20, help="cited pages (at most 40)")
    parser.add_argument("--changes", type=int, default=4, help="pages changed before re-check")
    parser.add_argument("--figures", type=int, default=3, help="figures edited for the watch")
    parser.add_argument(
        "--filler", type=int, default=60, help="paragraphs past each page's figures (~9 kB)"
    )
    parser.add_argument(
        "--dynamic", type=int, default=0, help="pages sent without validators (a full GET each)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    results: dict = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        world = World(args.pages, folder, args.filler, args.dynamic)
        try:
            began = time.perf_counter()
            world.run("first")
            cited = asyncio.run(cited_pages(world.db, "first"))
            results["run"] = {
                "seconds": round(time.perf_counter() - began, 2),
                "pages cited": f"{len(cited)} of {args.pages}",
            }
            one = asyncio.run(stored(world.db))
            world.run("second")  # the same question again: the same pages
            both = asyncio.run(stored(world.db))
            per_run = {thread: sizes["bytes"] for thread, sizes in both["threads"].items()}
            results["evidence stored"] = {
                "bytes, first run": one["bytes"],
                "bytes named by each run": per_run,
                "bytes stored for both": both["bytes"],
                "shared between them": sum(per_run.values()) - both["bytes"],
                "texts": both["texts"],
            }
            results["recheck, nothing changed"], quiet = recheck(world, folder, "quiet")
            results["recheck, nothing changed"]["claims flagged"] = sum(
                c.state != "unchanged" for c in quiet.claims
            )
            expected = change(world, args.changes, cited)
            figures, found = recheck(world, folder, "changed")
            states = {c.statement: c.state for c in found.claims}
            expected = {s: e for s, e in expected.items() if s in states}  # claims the report makes
            changed = [s for s, state in expected.items() if state != "unchanged"]
            right = sum(states.get(s) == expected[s] for s in changed)
            verdicts = [c.verdict for c in found.claims if c.state == "quote_gone"]
            results[f"recheck, {args.changes} pages changed"] = figures | {
                "claims": len(found.claims),
                "changed claims sorted right": f"{right}/{len(changed)}",
                "unchanged claims flagged": sum(
                    states.get(s) != "unchanged" for s, e in expected.items() if e == "unchanged"
                ),
                "quote-gone verdicts": ", ".join(str(v) for v in verdicts),
            }
        finally:
            world.stop()
        results["watch, second version"] = watched(args.pages, args.figures, folder, args.filler)
    for section, figures in results.items():
        print(f"{section}:")
        for key, value in figures.items():
            print(f"  {key:<34} {value}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
