#!/usr/bin/env bash
# The render and Swagger UI tests drive a real Chromium: Debian's `chromium-headless-shell` (or its
# `chromium`), the first of SIFT_CHROMIUM_PATH's list that is there. make test installs the headless
# shell when it can (root with apt-get); otherwise it stops here and says what to install.
set -euo pipefail
paths="${SIFT_CHROMIUM_PATH:-/usr/bin/chromium-headless-shell:/usr/bin/chromium}"
found() {
  local p
  IFS=: read -ra list <<<"$paths"
  for p in "${list[@]}"; do [ -x "$p" ] && return 0; done
  return 1
}
found && exit 0
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "chromium: none at $paths; installing Debian's chromium-headless-shell package (a minute or two)"
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell) \
    >/dev/null 2>&1 && found; then
    exit 0
  fi
fi
echo "make test needs Chromium at one of $paths: install Debian's chromium-headless-shell package" >&2
echo "(sudo apt-get install chromium-headless-shell), or set SIFT_CHROMIUM_PATH to a Chromium binary" >&2
exit 1
