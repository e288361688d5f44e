"""The HTML report in a real browser (headless Chromium): every citation link lands on its source,
and no script from a source's text runs. Skips when Chromium is absent; `.ci/browser.sh` installs
it and runs this test, so CI never skips it.

A harness page loads the report in a frame, follows each citation's link (a fragment navigation)
and reads where `:target` landed; `--dump-dom` prints what it found. The same harness on a page
that puts the hostile title in raw shows the check can fail.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from deep_research.export.formats import Rendering

from report_sample import HOSTILE_TITLE, QUESTION, sample_facts, sample_output

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(BROWSER is None, reason="Chromium is not installed")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]
HARNESS = """<!DOCTYPE html><html><head><title>harness</title></head><body><pre id="out">-</pre>
<iframe id="f" src="report.html" width="800" height="600"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var out = [], win = this.contentWindow, doc = win.document;
  out.push("TITLE " + doc.title);
  out.push("ELEMENTS " + doc.querySelectorAll("script, img, iframe, object").length);
  doc.querySelectorAll("sup.cite a[href]").forEach(function (a) {
    win.location.hash = a.getAttribute("href");
    var target = doc.querySelector(":target");
    var source = target && target.closest("li.source");
    var back = target && target.querySelector("a.back");
    out.push("CITE " + a.textContent + " " + (source ? source.id : "none") + " " +
             (back ? back.getAttribute("href") : "none") + " #" + a.id);
  });
  document.getElementById("out").textContent = out.join("\\n");
});
</script></body></html>"""


def browse(folder: Path, page: str) -> list[str]:
    """The harness's findings about `page` (written as report.html in `folder`)."""
    (folder / "report.html").write_text(page, encoding="utf-8")
    (folder / "harness.html").write_text(HARNESS, encoding="utf-8")
    done = subprocess.run(
        [
            BROWSER,
            *FLAGS,
            f"--user-data-dir={folder / 'profile'}",
            "--allow-file-access-from-files",  # the harness reads the framed report
            "--virtual-time-budget=5000",
            "--dump-dom",
            (folder / "harness.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'<pre id="out">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stderr[-2000:]
    return found.group(1).splitlines()


def test_citations_land_on_their_sources_and_no_source_script_runs(tmp_path):
    lines = browse(tmp_path, Rendering(sample_output(), sample_facts()).html())
    assert lines[0] == f"TITLE {QUESTION}"  # the hostile title's script never set it
    assert lines[1] == "ELEMENTS 0"
    cites = [line.split() for line in lines[2:]]
    assert len(cites) == 10
    for _, number, source, back, anchor in cites:
        assert source == f"src-{number}" and back == anchor


def test_the_harness_sees_a_script_that_runs(tmp_path):
    """Control: the same harness on a page that embeds the hostile title raw."""
    raw = f"<!DOCTYPE html><html><head><title>{QUESTION}</title></head><body>{HOSTILE_TITLE}"
    lines = browse(tmp_path, raw + "</body></html>")
    assert lines[0].startswith("TITLE pwned") and lines[1] != "ELEMENTS 0"


def screenshot(page: Path, image: Path, width: int = 900, height: int = 1400) -> None:
    """A PNG of a page as headless Chromium renders it (used for docs/export-html.png)."""
    with tempfile.TemporaryDirectory() as profile:
        _shoot(page, image, width, height, profile)


def _shoot(page: Path, image: Path, width: int, height: int, profile: str) -> None:
    subprocess.run(
        [
            BROWSER,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={image}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
