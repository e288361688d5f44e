"""Time each export format on the sample report (tests/report_sample.py) and on a long one.

    python bench/bench_export.py [--repeat 3] [--copies 20]

The long report is the sample's body repeated `--copies` times (its citations and sources
stay valid). Prints seconds per format and the size of each file; PDF only when WeasyPrint
and Pango are installed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from deep_research.export.formats import FORMATS, Rendering  # noqa: E402
from deep_research.export.pdf import PdfRendererMissing  # noqa: E402

from report_sample import sample_facts, sample_output  # noqa: E402


def long_output(copies: int) -> dict:
    """The sample output with its body repeated."""
    output = sample_output()
    body, sources = output["report"].split("## Sources")
    output["report"] = body * copies + "## Sources" + sources
    return output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=20)
    args = parser.parse_args()
    for name, output in (("sample", sample_output()), ("long", long_output(args.copies))):
        for format in FORMATS:
            best, size = float("inf"), 0
            for _ in range(args.repeat):
                rendering = Rendering(output, sample_facts())  # nothing cached between runs
                started = time.perf_counter()
                try:
                    size = len(rendering.render(format))
                except PdfRendererMissing as error:
                    print(f"{name:<7} {format:<5} skipped: {error}")
                    break
                best = min(best, time.perf_counter() - started)
            else:
                print(f"{name:<7} {format:<5} {best:7.3f} s  {size / 1024:8.1f} KiB")


if __name__ == "__main__":
    main()
