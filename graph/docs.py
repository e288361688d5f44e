"""The documentation's generated sections: the graph diagram and the settings table, from the code.

`python -m deep_research.graph.docs` rewrites them in docs/; a test fails when they are out of date.
"""

from __future__ import annotations

import re
from pathlib import Path

from deep_research.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def mermaid() -> str:
    """The research graph with its worker subgraphs expanded, as a Mermaid block."""
    from deep_research.graph.research import build_graph

    return "```mermaid\n" + build_graph().get_graph(xray=1).draw_mermaid().rstrip() + "\n```"


def _default(name: str) -> str:
    field = Settings.model_fields[name]
    if name == "model":
        return "`$DEEP_RESEARCH_MODEL` or `gpt-4.1-mini`"
    if name == "worker_tools":
        return "`$DEEP_RESEARCH_WORKER_TOOLS` or `auto`"
    if name in ("search_backend", "web_backend"):
        return "the provider whose key is set, else duckduckgo"
    if name == "prices":
        return "genai-prices' table"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if value == {}:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def settings_table() -> str:
    """Every setting with its default and meaning, as a Markdown table."""
    rows = ["| setting | default | meaning |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        rows.append(f"| `{name}` | {_default(name)} | {field.description} |")
    return "\n".join(rows)


SECTIONS = {"graph": mermaid, "settings": settings_table}
GENERATED = {"graph": DOCS / "architecture.md", "settings": DOCS / "settings.md"}
"""Where each generated section lives."""


def render(text: str) -> str:
    """The text with every generated section it holds replaced by its current content."""
    for name, make in SECTIONS.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(\n<!-- {name}:end -->)", re.S)
        text = pattern.sub(lambda m, make=make: m.group(1) + make() + m.group(2), text)
    return text


if __name__ == "__main__":
    for page in set(GENERATED.values()):
        page.write_text(render(page.read_text(encoding="utf-8")), encoding="utf-8")
