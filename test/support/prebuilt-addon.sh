#!/usr/bin/env bash
# Keeps the better-sqlite3 addon that `npm ci` compiled, packed as the prebuilt archive its installer
# (prebuild-install) looks for in a local folder before it downloads or compiles. Where GitHub's
# prebuilt binaries cannot be reached, the next clean install on this machine unpacks it instead of
# compiling again (88 s of CPU on two cores). The installer loads an archive before it uses it; one
# that fails to load is compiled over, as without this. Usage: prebuilt-addon.sh FOLDER
set -euo pipefail
cd "$(dirname "$0")/../../node_modules/better-sqlite3"
folder="$1"
addon=build/Release/better_sqlite3.node
[ -f "$addon" ] || exit 0
name="$(node -p '`better-sqlite3-v${require("./package.json").version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`')"
[ -f "$folder/$name" ] && exit 0
mkdir -p "$folder"
tmp="$(mktemp "$folder/.$name.XXXXXX")"
tar -czf "$tmp" "$addon" && chmod 644 "$tmp" && mv "$tmp" "$folder/$name" || rm -f "$tmp"
