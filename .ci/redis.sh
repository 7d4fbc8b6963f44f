#!/usr/bin/env bash
# Installs Redis from Debian packages (when missing), starts it on
# 127.0.0.1, and prints on stdout the URL the store/redis tests use:
#
#   export RUNLET_REDIS_URL="$(bash .ci/redis.sh)"
#
# Meant for a throw-away CI or development machine running Debian 12 as root,
# with or without systemd. The server has no password and keeps nothing on
# disk (no RDB snapshots, no AOF): it is for tests only, and listens on
# loopback alone. Idempotent; it takes a moment when a server already
# answers on the port.
#
# Environment: REDIS_PORT (default 6379).
set -euo pipefail

port="${REDIS_PORT:-6379}"
log() { echo "redis.sh: $*" >&2; }
ping() { [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null || true)" = PONG ]; }

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		exec sudo -n -E bash "$0" "$@"
	fi
	log "must run as root (it installs packages and starts the server as user redis)"
	exit 1
fi

# 1. Install.
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	log "installing redis-server from Debian packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends redis-server redis-tools >&2
fi

# 2. Start, without systemd, as the package's redis user, unless a server
# already answers (started by the package's service or an earlier run).
if ! ping; then
	log "starting redis-server on 127.0.0.1:$port"
	user=redis
	id -u "$user" >/dev/null 2>&1 || user=root
	dir=/var/lib/redis/runlet-ci-$port
	install -d -o "$user" -g "$user" -m 0750 "$dir"
	install -d -o "$user" -g "$user" -m 0755 /var/log/redis
	logfile=/var/log/redis/runlet-ci-$port.log
	# No config file: everything is on the command line. save "" and
	# appendonly no keep the test server off the disk.
	runuser -u "$user" -- redis-server --port "$port" --bind 127.0.0.1 --protected-mode yes \
		--daemonize yes --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$logfile" \
		--save "" --appendonly no >&2
	for _ in $(seq 1 60); do
		if ping; then
			break
		fi
		sleep 0.5
	done
	if ! ping; then
		log "server not ready on 127.0.0.1:$port; last log lines:"
		tail -n 20 "$logfile" >&2 || true
		exit 1
	fi
fi

log "$(redis-server --version | cut -d' ' -f1-3) ready on 127.0.0.1:$port"
echo "redis://127.0.0.1:$port/0"
