#!/usr/bin/env bash
# The render and Swagger UI tests drive a real Chromium: Debian's `chromium` package. make test
# installs it when it can (root with apt-get); otherwise it stops here and says what to install.
set -euo pipefail
path="${SIFT_CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$path" ] && exit 0
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "chromium: $path is missing; installing Debian's chromium package (a minute or two)"
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null 2>&1 \
    && [ -x "$path" ]; then
    exit 0
  fi
fi
echo "make test needs Chromium at $path: install Debian's chromium package (sudo apt-get install chromium)," >&2
echo "or set SIFT_CHROMIUM_PATH to a Chromium binary" >&2
exit 1
