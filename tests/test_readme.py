"""The README and docs/ as a contract: short enough to walk, links that lead somewhere, the code
they show runs as pasted, and what they generate from the code current
(`python -m deep_research.graph.docs`)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from deep_research.cli import exit_codes
from deep_research.graph.docs import DOCS, GENERATED, README, ROOT, render
from deep_research.service.setting_sources import FLAGS
from deep_research.settings import Settings

README_LINES = 250
PAGES = [README, *sorted(DOCS.glob("*.md"))]
CHANGE_HISTORY = re.compile(
    r"before this change|after this change|the latest merge|after merging|the code before|"
    r"the old (code|version)|now (counts|does|uses) ",
    re.I,
)
COMMIT_AND_DATE = re.compile(
    r"\b[0-9a-f]{7}\b.*?\b20\d\d-\d\d-\d\d\b|\b20\d\d-\d\d-\d\d\b.*?\b[0-9a-f]{7}\b"
)


def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, re.S)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `_` and `-` dropped, spaces to
    hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    body = re.sub(r"```.*?```", "", text(page), flags=re.S)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", body, re.M)}


def test_generated_sections_are_current():
    for name, page in GENERATED.items():
        content = text(page)
        assert f"<!-- {name}:start -->" in content, f"{page.name} lost its {name} section"
        assert render(content) == content, (
            f"{page.name} is out of date: run python -m deep_research.graph.docs"
        )
    assert "`max_workers` | 6 |" in text(GENERATED["settings"])


def test_the_readme_is_short_and_has_what_a_newcomer_looks_for():
    readme = text(README)
    assert len(readme.splitlines()) <= README_LINES
    headings = re.findall(r"^#+ (.+)$", readme, re.M)
    for wanted in ("Quick start", "From Python", "The command line", "batch", "Exit codes"):
        assert wanted in headings
    for wanted in ("Settings", "Providers", "Troubleshooting", "Documentation"):
        assert wanted in headings


def test_the_readme_test_command_is_the_one_ci_runs():
    readme = text(README)
    command = '.venv/bin/pip install -e ".[dev]" && .venv/bin/pytest'
    assert command in readme
    assert re.search(r"^\.venv/bin/pytest\b", text(ROOT / ".ci" / "run"), re.M)


def test_every_exit_code_of_the_code_is_in_the_table_and_no_other():
    table = re.findall(r"^\| (\d+) \|", text(README), re.M)
    codes = {v for k, v in vars(exit_codes).items() if k.isupper() and isinstance(v, int)}
    assert sorted(int(code) for code in table) == sorted(codes)


def test_the_flags_and_settings_the_readme_names_exist():
    readme = text(README)
    options = {flag.option for flag in FLAGS}
    section = readme[readme.index("### Settings") : readme.index("## Providers")]
    listed = set(re.findall(r"`(--[a-z-]+)", section))
    assert listed - {"--set", "--config"} <= options
    for name in re.findall(r"--set ([a-z_]+)=", readme):
        assert name in Settings.model_fields


def prose(markdown: str) -> str:
    """The Markdown without code blocks and code spans (where a link is shown, not followed)."""
    markdown = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return re.sub(r"``.+?``|`[^`\n]+`", "", markdown)


def test_links_lead_somewhere():
    for page in PAGES:
        for target in re.findall(r"\]\((?!https?://)([^)]+)\)", prose(text(page))):
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            assert linked.exists(), f"{page.name} links to {target}, which does not exist"
            if anchor:
                assert anchor in anchors(linked), f"{page.name}: no heading for #{anchor}"


def test_no_change_history_in_the_docs():
    for page in PAGES:
        found = CHANGE_HISTORY.search(text(page))
        assert found is None, f"{page.name} tells history: {found.group(0)!r}"


def test_every_benchmark_says_when_on_which_commit_and_where():
    sections = re.split(r"^## ", text(DOCS / "benchmarks.md"), flags=re.M)[1:]
    assert sections
    for section in sections:
        title = section.splitlines()[0]
        assert COMMIT_AND_DATE.search(section), f"benchmarks.md '{title}' lacks commit and date"
        assert "machine" in section or "VM" in section, f"'{title}' does not say where"


@pytest.mark.parametrize("reviewer_answers", [True, False], ids=["reviewed", "no-valid-review"])
def test_the_readme_python_runs_as_pasted(
    chat_server, search_server, monkeypatch, tmp_path, capsys, reviewer_answers
):
    """Both blocks of "From Python", as a reader pastes them, against the stand-ins; the first
    also when the reviewer never gives a valid answer (`quality` is None)."""
    if not reviewer_answers:
        monkeypatch.setattr(chat_server.brain, "on_QualityAssessment", lambda call: {})
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(text(README))
    assert len(blocks) == 2
    for block in blocks if reviewer_answers else blocks[:1]:
        namespace: dict = {"__name__": "__main__"}
        exec(compile(block, "README.md", "exec"), namespace)
        asyncio.set_event_loop(None)
    printed = capsys.readouterr().out
    assert "## Sources" in printed
    stop_line = re.search(r"^\w+ \d+ (\S+)$", printed, re.MULTILINE)  # print(stop, rounds, score)
    assert (stop_line.group(1) == "unknown") is not reviewer_answers
    if reviewer_answers:
        assert "plan:" in printed and "done after 1 round: max_iterations" in printed


def test_the_durable_run_in_the_docs_runs_as_pasted(
    chat_server, search_server, monkeypatch, tmp_path, capsys
):
    monkeypatch.chdir(tmp_path)
    (block,) = [b for b in python_blocks(text(DOCS / "architecture.md")) if "durable" in b]
    exec(compile(block, "architecture.md", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip() == "max_iterations"
    assert (tmp_path / "runs.sqlite").exists()
