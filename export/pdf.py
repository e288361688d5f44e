"""The report as PDF: the HTML page printed by WeasyPrint (an optional extra: `.[pdf]`).

WeasyPrint needs Pango from the system. Without it (or without WeasyPrint) the renderer is
missing, said in one line that names what to install; the other formats are unaffected. A report
in a script no installed font covers (Chinese, Japanese, Korean without fonts-noto-cjk) would
print as boxes: fontconfig (`fc-list`) is asked, and a warning names the package to install.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import shutil
import subprocess

from deep_research.domain.extras import install_extra

PIP_INSTALL = install_extra("pdf")
APT_INSTALL = "apt-get install libpango-1.0-0 libpangoft2-1.0-0 (and fonts-noto-cjk for CJK)"


FONT_PACKAGE = "fonts-noto-cjk"
_SCRIPTS = (  # a script's characters, and the fontconfig language a font must cover for them
    ("Korean", re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"), "ko"),
    ("Japanese", re.compile("[\u3040-\u30ff\u31f0-\u31ff]"), "ja"),
    ("Chinese", re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"), "zh-cn"),
)
logger = logging.getLogger(__name__)


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


def has_font_for(language: str) -> bool | None:
    """Whether fontconfig knows an installed font covering `language`; None when it cannot be
    asked (no `fc-list`)."""
    command = shutil.which("fc-list")
    if command is None:
        return None
    try:
        found = subprocess.run(
            [command, f":lang={language}", "family"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return bool(found.stdout.strip()) if found.returncode == 0 else None


def scripts_without_font(text: str) -> list[str]:
    """The scripts `text` is written in that no installed font covers (Chinese, ...)."""
    return [
        name
        for name, letters, language in _SCRIPTS
        if letters.search(text) and has_font_for(language) is False
    ]


def warn_missing_fonts(text: str) -> None:
    """A warning naming the package to install, when the PDF would show `text` as boxes."""
    missing = scripts_without_font(text)
    if missing:
        logger.warning(
            "the report has %s text but no installed font covers it: the PDF shows boxes "
            "instead; install %s (apt-get install %s) and export it again",
            " and ".join(missing),
            FONT_PACKAGE,
            FONT_PACKAGE,
        )


def render_pdf(page: str) -> bytes:
    """The PDF of an HTML page (internal links and source links stay clickable)."""
    weasyprint = _weasyprint()
    warn_missing_fonts(page)
    from weasyprint.urls import URLFetcher

    nothing = URLFetcher(allowed_protocols=())  # the page is self-contained: fetch no URL
    log = logging.getLogger("weasyprint")
    level = log.level
    log.setLevel(logging.ERROR)  # screen-only CSS it skips (media queries, overflow) is no news
    try:
        return weasyprint.HTML(string=page, url_fetcher=nothing).write_pdf()
    finally:
        log.setLevel(level)
