#!/usr/bin/env bash
# Builds the user guide (docs/, an mdBook) into dist/guide/, next to the report page, offline.
# Installs mdBook first when it is not there: pinned, from crates.io, a debug build without the
# server and the file watcher (`--no-default-features --features search`): about 1.5 minutes
# of 2 cores once (the build itself takes under a second).
# scripts/test.sh runs it after the page's release build (trunk replaces dist/ when it builds).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
MDBOOK=0.5.4
if ! mdbook --version 2>/dev/null | grep -q "v$MDBOOK"; then
  echo "build-guide: cargo install mdbook $MDBOOK (debug build)" >&2
  CARGO_INCREMENTAL=0 cargo install mdbook --version "=$MDBOOK" --locked --debug \
    --no-default-features --features search --quiet >&2
fi
mdbook build "$root/docs"
test -f "$root/dist/guide/index.html"
echo "build-guide: the guide is in dist/guide/ (open dist/guide/index.html)" >&2
