#!/usr/bin/env bash
# What make test needs from Debian beyond Node: a Chromium for the render and Swagger UI tests
# (`chromium-headless-shell`, or `chromium`: the first of SIFT_CHROMIUM_PATH's list that is there),
# the DejaVu fonts the PDF tests embed (Greek and Arabic), and the egress proxies the proxy tests
# start (tinyproxy for HTTP CONNECT, microsocks for SOCKS5), and Tesseract with its English data
# for the OCR tests. Installed when they can be (root with apt-get); otherwise this stops here and
# says what to install.
set -euo pipefail
paths="${SIFT_CHROMIUM_PATH:-/usr/bin/chromium-headless-shell:/usr/bin/chromium}"
font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
has_chromium() {
  local p
  IFS=: read -ra list <<<"$paths"
  for p in "${list[@]}"; do [ -x "$p" ] && return 0; done
  return 1
}
missing() {
  has_chromium || echo chromium-headless-shell
  [ -f "$font" ] || echo fonts-dejavu-core
  [ -x /usr/bin/tinyproxy ] || echo tinyproxy
  [ -x /usr/bin/microsocks ] || echo microsocks
  [ -x /usr/bin/tesseract ] || echo tesseract-ocr
  [ -n "$(ls /usr/share/tesseract-ocr/*/tessdata/eng.traineddata 2>/dev/null)" ] || echo tesseract-ocr-eng
}
need=$(missing | xargs)
[ -z "$need" ] && exit 0
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "make test: installing Debian's $need (a minute or two)"
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need) >/dev/null 2>&1 \
    && [ -z "$(missing | xargs)" ]; then
    exit 0
  fi
fi
echo "make test needs Debian's $(missing | xargs): sudo apt-get install $(missing | xargs)" >&2
has_chromium || echo "(or set SIFT_CHROMIUM_PATH to a Chromium binary; looked for: $paths)" >&2
exit 1
