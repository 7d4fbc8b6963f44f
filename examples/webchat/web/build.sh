#!/usr/bin/env bash
# Rebuilds the page's assets (../assets/app.js) from src/ with the pinned
# npm packages. The built file is committed, so `go run ./examples/webchat`
# needs no Node; run this after changing src/ or package.json.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
./node_modules/.bin/esbuild src/main.jsx --bundle --minify --format=esm \
  --jsx=automatic --target=es2022 --define:process.env.NODE_ENV='"production"' \
  --legal-comments=linked --outfile=../assets/app.js
