"""Which format a file gets (by its extension), and writing a finished run in several at once.

A format that cannot be written (the PDF renderer missing, a file that cannot be made) is
reported, never in the way of the others: every other file is still written. Every format is
rendered from the output with control characters removed (a run stored before they were
cleaned at the door still exports).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from deep_research.domain.citations import evidence_table
from deep_research.domain.control_chars import without_any_controls, without_controls
from deep_research.export.facts import RunFacts

Format = Literal["md", "html", "docx", "pdf"]
FORMATS: tuple[Format, ...] = ("md", "html", "docx", "pdf")
_EXTENSIONS: dict[str, Format] = {
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
    ".pdf": "pdf",
}


class UnknownFormat(ValueError):
    """A file name whose extension names no format we write."""


def format_of(path: Path) -> Format:
    """The format a file gets from its extension (.md, .html, .docx, .pdf)."""
    found = _EXTENSIONS.get(path.suffix.lower())
    if found is None:
        raise UnknownFormat(
            f"--output {path}: the extension {path.suffix or '(none)'!r} names no format; "
            "use .md, .html, .docx or .pdf"
        )
    return found


class BinaryToTerminal(UnknownFormat):
    """Word or PDF asked for on standard output while it is a terminal (curl refuses too)."""


def check_stdout(format: Format | None, terminal: bool) -> None:
    """Refuse, before any work, to write a binary format to a terminal."""
    if format in ("docx", "pdf") and terminal:
        raise BinaryToTerminal(
            f"--format {format}: refusing to write binary output to a terminal; redirect it "
            f"(> report.{format}) or name a file with --output report.{format}"
        )


def parse_formats(text: str) -> list[Format]:
    """`md,html` as a list of formats (for --format of batch and eval)."""
    names = [name.strip().lower().lstrip(".") for name in text.split(",") if name.strip()]
    wrong = [name for name in names if name not in FORMATS]
    if wrong or not names:
        raise UnknownFormat(f"--format {text!r}: choose from {', '.join(FORMATS)}")
    return list(dict.fromkeys(names))  # type: ignore[arg-type]


def check_formats(formats: list[Format]) -> None:
    """Raise now (before any work) when a requested format cannot be written here."""
    if "pdf" in formats:
        from deep_research.export.pdf import check_pdf_renderer

        check_pdf_renderer()


def without_control_characters(output: dict[str, Any]) -> dict[str, Any]:
    """The output with no control character in its report, sources or citation checks."""
    sources = [
        s.model_copy(
            update={
                "url": without_any_controls(s.url),
                "title": without_any_controls(s.title),
                "published": without_any_controls(s.published),
            }
        )
        for s in output.get("sources") or []
    ]
    checks = [
        c.model_copy(
            update={
                "statement": without_controls(c.statement),
                "evidence": without_controls(c.evidence),
            }
        )
        for c in output.get("citations") or []
    ]
    report = without_controls(output.get("report") or "")
    return {**output, "report": report, "sources": sources, "citations": checks}


@dataclass
class Rendering:
    """One finished run, rendered lazily: the structure and the HTML are built at most once."""

    output: dict[str, Any]
    facts: RunFacts
    evidence: bool = False  # Markdown: append the evidence table (the other formats always show it)
    _cache: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Every format renders the output without control characters."""
        self.output = without_control_characters(self.output)

    def document(self):
        if "document" not in self._cache:
            from deep_research.export.document import build_document

            self._cache["document"] = build_document(self.output, self.facts)
        return self._cache["document"]

    def html(self) -> str:
        if "html" not in self._cache:
            from deep_research.export.html_page import render_html

            self._cache["html"] = render_html(self.document())
        return self._cache["html"]

    def render(self, format: Format) -> bytes:
        """The bytes of the report in `format`."""
        if format == "md":
            report = self.output.get("report") or ""
            if self.evidence:
                citations, sources = self.output.get("citations") or [], self.output.get("sources")
                language = self.facts.language or None
                report += "\n" + evidence_table(citations, report, sources, language)
            return report.encode("utf-8")
        if format == "html":
            return self.html().encode("utf-8")
        if format == "docx":
            from deep_research.export.word import render_docx

            return render_docx(self.document())
        from deep_research.export.pdf import render_pdf

        return render_pdf(self.html())


def write_file(path: Path, data: bytes) -> None:
    """Write a file whole: a crash leaves the old file or the new one, never half.

    The temporary file beside it is new (a random name, created exclusively, no link followed):
    a file or link planted where it would go is never written through.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{secrets.token_hex(6)}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(partial, flags, 0o666)  # the umask applies, as for any new file
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_reports(
    rendering: Rendering,
    paths: list[Path],
    stdout_format: Format | None = None,
    stdout: Callable[[bytes], None] | None = None,
) -> list[str]:
    """Every file in its format (and stdout in one); returns what could not be written, why."""
    from deep_research.export.pdf import PdfRendererMissing

    problems = []
    targets: list[tuple[Format, Path | None]] = [(format_of(p), p) for p in paths]
    if stdout_format:
        targets.append((stdout_format, None))
    for format, path in targets:
        try:
            data = rendering.render(format)
        except PdfRendererMissing as error:
            problems.append(f"{path or 'stdout'}: {error}")
            continue
        except ValueError as error:  # e.g. text a renderer refuses: named, the rest still written
            problems.append(f"{path or 'stdout'}: could not render {format}: {error}")
            continue
        if path is None:  # text ends with a newline on a terminal, as print() did
            stdout(data + b"\n" if format in ("md", "html") and not data.endswith(b"\n") else data)
        else:
            write_file(path, data)
    return problems
