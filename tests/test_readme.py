"""The README's generated sections match the code (`python -m graph.docs` updates them)."""

from graph.docs import README, render


def test_readme_diagram_and_settings_are_current():
    text = README.read_text(encoding="utf-8")
    assert render(text) == text, "README is out of date: run `python -m graph.docs`"
    assert "<!-- graph:start -->\n```mermaid" in text and "`max_workers` | 6 |" in text
