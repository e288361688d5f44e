# Sourced by .ci/run (add `. .ci/browser.sh` after the pytest line): install Debian's Chromium
# and CJK fonts if needed, then check the HTML report in it: every citation link lands on its
# source, no script from a source's text runs. A skip here is a failure.
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
fi
mkdir -p .ci/models
.venv/bin/pytest -rs tests/test_browser.py | tee .ci/models/browser.log
if grep -q "SKIPPED" .ci/models/browser.log; then
  echo "the browser test was skipped" >&2
  exit 1
fi
