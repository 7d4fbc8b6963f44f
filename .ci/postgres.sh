#!/usr/bin/env bash
# Installs PostgreSQL from Debian packages (when missing), starts it on
# 127.0.0.1, and prints on stdout the DSN the store/postgres tests use:
#
#   export RUNLET_POSTGRES_DSN="$(bash .ci/postgres.sh)"
#
# Meant for a throw-away CI or development machine running Debian 12 as root,
# with or without systemd. Loopback connections are trusted (no password):
# do not run it on a machine others can log in to. Idempotent; it takes a
# second or two when PostgreSQL is already installed and running.
#
# Environment: PGPORT (default 5432), RUNLET_PG_DB (default runlet_test).
set -euo pipefail

port="${PGPORT:-5432}"
db="${RUNLET_PG_DB:-runlet_test}"
log() { echo "postgres.sh: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		exec sudo -n -E bash "$0" "$@"
	fi
	log "must run as root (it installs packages and starts the server as user postgres)"
	exit 1
fi

# 1. Install.
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || ! command -v pg_ctlcluster >/dev/null; then
	log "installing postgresql from Debian packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends postgresql postgresql-client >&2
fi
ver="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"

# 2. A cluster named main for that version.
if ! pg_lsclusters -h | awk -v v="$ver" '$1 == v && $2 == "main" { found = 1 } END { exit !found }'; then
	log "creating cluster $ver/main"
	pg_createcluster "$ver" main >&2
fi
conf="/etc/postgresql/$ver/main"

# 3. Listen on loopback at $port, trust loopback connections. The hba lines
# go first so they win over Debian's password rules for the same addresses.
changed=0
if [ "$(pg_conftool -s "$ver" main show port 2>/dev/null || true)" != "$port" ]; then
	pg_conftool "$ver" main set port "$port"
	changed=1
fi
# Debian's postgresql.conf reads conf.d/ last, so this wins over any
# listen_addresses set above it.
dropin="$conf/conf.d/runlet-ci.conf"
want="listen_addresses = '127.0.0.1' # runlet-ci"
if [ "$(cat "$dropin" 2>/dev/null || true)" != "$want" ]; then
	install -d -o postgres -g postgres "$conf/conf.d"
	grep -q "^include_dir = 'conf.d'" "$conf/postgresql.conf" || echo "include_dir = 'conf.d'" >>"$conf/postgresql.conf"
	echo "$want" >"$dropin"
	changed=1
fi
if ! grep -q '# runlet-ci' "$conf/pg_hba.conf"; then
	log "trusting loopback connections in $conf/pg_hba.conf"
	{
		echo "host all all 127.0.0.1/32 trust # runlet-ci"
		echo "host all all ::1/128 trust # runlet-ci"
		cat "$conf/pg_hba.conf"
	} >"$conf/pg_hba.conf.new"
	chown --reference="$conf/pg_hba.conf" "$conf/pg_hba.conf.new"
	chmod --reference="$conf/pg_hba.conf" "$conf/pg_hba.conf.new"
	mv "$conf/pg_hba.conf.new" "$conf/pg_hba.conf"
	changed=1
fi

# 4. Start (or restart to pick up changed settings), without systemd.
install -d -o postgres -g postgres -m 2775 /var/run/postgresql
status="$(pg_lsclusters -h | awk -v v="$ver" '$1 == v && $2 == "main" { print $4 }')"
if [ "$status" != "online" ]; then
	log "starting cluster $ver/main"
	pg_ctlcluster --skip-systemctl-redirect "$ver" main start >&2
elif [ "$changed" = 1 ]; then
	log "restarting cluster $ver/main for the new settings"
	pg_ctlcluster --skip-systemctl-redirect "$ver" main restart >&2
fi
for _ in $(seq 1 60); do
	if pg_isready -q -h 127.0.0.1 -p "$port"; then
		break
	fi
	sleep 0.5
done
if ! pg_isready -q -h 127.0.0.1 -p "$port"; then
	log "server not ready on 127.0.0.1:$port; last log lines:"
	tail -n 20 "/var/log/postgresql/postgresql-$ver-main.log" >&2 || true
	exit 1
fi

# 5. The test database.
psql_() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
if [ "$(psql_ -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
	log "creating database $db"
	psql_ -d postgres -c "CREATE DATABASE \"$db\"" >&2
fi

log "PostgreSQL $ver ready on 127.0.0.1:$port"
echo "postgres://postgres@127.0.0.1:$port/$db?sslmode=disable"
