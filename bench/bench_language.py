"""Benchmark the language detector: its load, the memory it holds, and a detection's time.

    python bench/bench_language.py

Loads py3langid's model as `domain.language` does (both scripts' identifiers), in a fresh
process each way: with the automaton held as its trie (`domain.langid_automaton`, as the engine
holds it) and with the library's table of every move. Prints, for each: seconds to load,
memory the identifiers hold (`tracemalloc`, numpy's arrays included, the modules' own not), and
the time to detect a question and a report's first 2,000 characters.
"""

from __future__ import annotations

import json
import subprocess
import sys
import timeit

QUESTION = "Wie unterscheiden sich zstd und xz bei der Archivierung von Logdateien?"
REPORT = ("Zstandard compresses the logs faster than xz, which reaches a better ratio. " * 30)[
    :2000
]


def measure(held_as: str) -> dict:
    """In this process: load the identifiers with the automaton `held_as` ("trie" or
    "table"), and time them."""
    import gc
    import time
    import tracemalloc

    import py3langid.langid  # noqa: F401  (the modules' own memory is not the model's)

    from deep_research.domain import langid_automaton, language

    if held_as == "table":
        langid_automaton.trie_moves = lambda nextmove, rows: None  # the library's own table
    scripts = (language._LATIN, language._CYRILLIC)
    started = time.perf_counter()
    language._restricted_identifiers(scripts)  # timed untraced: tracing slows numpy's steps
    load = time.perf_counter() - started
    gc.collect()
    tracemalloc.start()
    identifiers = language._restricted_identifiers(scripts)
    gc.collect()
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    latin = identifiers[language._LATIN]
    per_call = {
        name: min(timeit.repeat(lambda t=text: latin.classify(t), number=20, repeat=5)) / 20
        for name, text in (("question", QUESTION), ("report", REPORT))
    }
    return {"load_s": load, "held_mib": held / 2**20, "peak_mib": peak / 2**20, **per_call}


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(measure(sys.argv[2])))
        return
    print(f"{'automaton':>10} {'load s':>7} {'held MiB':>9} {'load peak MiB':>13} "
          f"{'question µs':>11} {'2,000 chars µs':>14}")  # fmt: skip
    for held_as in ("trie", "table"):
        child = subprocess.run(
            [sys.executable, __file__, "--one", held_as],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(child.stdout.strip().splitlines()[-1])
        print(
            f"{held_as:>10} {row['load_s']:>7.2f} {row['held_mib']:>9.1f} "
            f"{row['peak_mib']:>13.1f} {row['question'] * 1e6:>11.0f} {row['report'] * 1e6:>14.0f}"
        )


if __name__ == "__main__":
    main()
