#!/usr/bin/env bash
# Rebuilds the page's assets (../assets/app.js) from src/ with the pinned
# npm packages. The built file is committed, so `go run ./examples/webchat`
# needs no Node; run this after changing src/ or package.json.
#
# Environment: OUT, the file to write (default ../assets/app.js);
# NPM_CI=0 skips `npm ci` (TestAssetsUpToDate builds with what is installed).
set -euo pipefail
cd "$(dirname "$0")"
if [ "${NPM_CI:-1}" != 0 ]; then
  npm ci --no-audit --no-fund
fi
./node_modules/.bin/esbuild src/main.jsx --bundle --minify --format=esm \
  --jsx=automatic --target=es2022 --define:process.env.NODE_ENV='"production"' \
  --legal-comments=linked --log-level=warning --outfile="${OUT:-../assets/app.js}"
