# Sourced by .ci/run (add `. .ci/browser.sh` after its pytest line): the export checks with real
# tools. Installs Debian's Chromium (it brings Pango, which WeasyPrint needs), the CJK fonts and
# LibreOffice Writer if needed, then runs the export tests: the HTML report in headless Chromium
# (every citation link lands on its source, no script from a source's text runs), the PDF read
# back with pypdf, the Word file opened by LibreOffice. A skip here is a failure.
if ! command -v chromium >/dev/null 2>&1 || ! command -v soffice >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    chromium fonts-noto-cjk libreoffice-writer-nogui >/dev/null
fi
mkdir -p .ci/models
.venv/bin/pytest -rs tests/test_browser.py tests/test_export.py | tee .ci/models/export.log
if grep -q "SKIPPED" .ci/models/export.log; then
  echo "an export check was skipped" >&2
  exit 1
fi
