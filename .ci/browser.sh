# Sourced by .ci/run before the tests: the export checks use real tools. Installs Debian's
# Chromium (it brings Pango, which WeasyPrint needs), the CJK fonts and LibreOffice Writer if
# any is missing, so that tests/test_browser.py (the HTML report in headless Chromium: every
# citation link lands on its source, no script from a source's text runs), tests/test_web.py
# (the web app in Chromium through Playwright, which uses this browser: nothing is downloaded),
# the PDF test's CJK text (tests/test_export.py skips it where fontconfig finds no CJK font) and
# the LibreOffice check of the Word file run instead of skipping; .ci/run fails if any skips.
if ! command -v chromium >/dev/null 2>&1 || ! command -v soffice >/dev/null 2>&1 \
  || ! command -v fc-list >/dev/null 2>&1 || [ -z "$(fc-list :lang=zh family)" ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    chromium fonts-noto-cjk fontconfig libreoffice-writer-nogui >/dev/null
fi
