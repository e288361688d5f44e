"""The project installs one name, `deep_research`, so it lives beside anyone's `settings.py`.

A wheel is built from the repository as pip builds it, and its top level is read; the README's
Python import then runs from a folder that holds its own `settings.py` and `tools/` package
(every Django project has the first) without picking either up.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_wheel_adds_exactly_one_top_level_package(tmp_path):
    build = ("wheel", "--no-deps", "--no-build-isolation", "-q", "--wheel-dir", str(tmp_path))
    subprocess.run(
        [sys.executable, "-m", "pip", *build, str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("deep_research-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"deep_research"}
    assert "deep_research/graph/research.py" in names
    assert "deep_research/evaluation/samples/tasks.jsonl" in names  # package data comes along
    for static in ("htmx.min.js", "sse.js", "web.js", "web.css", "htmx-LICENSE.txt"):
        assert f"deep_research/web/static/{static}" in names  # the web app needs no download
    assert not any(name.startswith("deep_research/tests/") for name in names)


def test_the_readme_import_works_beside_a_settings_py_and_a_tools_package(tmp_path):
    (tmp_path / "settings.py").write_text("DEBUG = True\n", encoding="utf-8")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("", encoding="utf-8")
    probe = (
        "from deep_research.graph import graph; print(type(graph).__name__)\n"
        "from deep_research.export.html_page import stylesheet; assert stylesheet()"
    )  # package data is found by the package's own name
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-800:]
    assert done.stdout.strip() == "CompiledStateGraph"
