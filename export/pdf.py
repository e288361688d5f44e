"""The report as PDF: the HTML page printed by WeasyPrint (an optional extra: `.[pdf]`).

WeasyPrint needs Pango from the system. Without it (or without WeasyPrint) the renderer is
missing, said in one line that names what to install; the other formats are unaffected.
"""

from __future__ import annotations

import contextlib
import io
import logging

PIP_INSTALL = "pip install 'deep-research[pdf]'"
APT_INSTALL = "apt-get install libpango-1.0-0 libpangoft2-1.0-0 (and fonts-noto-cjk for CJK)"


class PdfRendererMissing(RuntimeError):
    """WeasyPrint or the Pango library it needs is not installed."""


def _weasyprint():
    """The weasyprint module, or PdfRendererMissing naming what to install."""
    quiet = io.StringIO()  # WeasyPrint prints its own help to stdout, where a report may go
    try:
        with contextlib.redirect_stdout(quiet):
            import weasyprint
    except ImportError as error:
        raise PdfRendererMissing(
            f"PDF needs WeasyPrint, which is not installed ({error.name}): {PIP_INSTALL}, "
            f"and on Debian or Ubuntu {APT_INSTALL}"
        ) from None
    except OSError as error:
        raise PdfRendererMissing(
            f"PDF needs the Pango library, which WeasyPrint cannot load ({error}): "
            f"on Debian or Ubuntu, {APT_INSTALL}"
        ) from None
    return weasyprint


def check_pdf_renderer() -> None:
    """Raise PdfRendererMissing now, before any work, when the PDF cannot be written."""
    _weasyprint()


def render_pdf(page: str) -> bytes:
    """The PDF of an HTML page (internal links and source links stay clickable)."""
    weasyprint = _weasyprint()
    from weasyprint.urls import URLFetcher

    nothing = URLFetcher(allowed_protocols=())  # the page is self-contained: fetch no URL
    log = logging.getLogger("weasyprint")
    level = log.level
    log.setLevel(logging.ERROR)  # screen-only CSS it skips (media queries, overflow) is no news
    try:
        return weasyprint.HTML(string=page, url_fetcher=nothing).write_pdf()
    finally:
        log.setLevel(level)
