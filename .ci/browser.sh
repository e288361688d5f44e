# Sourced by .ci/run: install Debian's Chromium (and CJK fonts) if needed, then check the HTML
# report in it: every citation link lands on its source, no script from a source's text runs.
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
fi
.venv/bin/pytest -rs tests/test_browser.py
