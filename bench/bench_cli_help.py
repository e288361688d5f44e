"""How long `deep-research --help` and `deep-research run --help` take: the command's start-up cost.

python bench/bench_cli_help.py --repeat 10
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], repeat: int) -> list[float]:
    """Wall seconds of each of `repeat` runs of the command line `argv`."""
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    """Print the median and spread of each command's wall time, and their ratio to bare Python."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="runs of each command")
    args = parser.parse_args()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "deep-research --help": [sys.executable, "-m", "deep_research.cli", "--help"],
        "deep-research run --help": [sys.executable, "-m", "deep_research.cli", "run", "--help"],
    }
    baseline = None
    for label, argv in commands.items():
        seconds = timed(argv, args.repeat)
        median = statistics.median(seconds)
        baseline = baseline or median
        print(
            f"{label:<26} median {median:.3f} s  min {min(seconds):.3f} s  "
            f"max {max(seconds):.3f} s  ({median / baseline:.1f}x bare Python)"
        )


if __name__ == "__main__":
    main()
