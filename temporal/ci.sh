#!/usr/bin/env bash
# CI for the nested temporal module (called at the end of .ci/run; the root
# module's ./... does not reach nested modules).
#
# 1. Builds the dev server the integration tests start
#    (internal/devserver: go.temporal.io/server's temporaltest server, a
#    module of its own). The build is slow the first time (minutes, ~2.6 GB
#    of memory while linking), so the binary is kept in a directory keyed on
#    the dev server's sources, go.sum and the Go version, beside the Go build
#    cache, and built again only when one of them changes. Never with -race.
# 2. Runs go vet, go test -race (RUNLET_TEMPORAL_DEVSERVER pointing at the
#    binary) and staticcheck in the temporal module.
#
# Measured on a shared 2-core machine: ~19 min with empty module and build
# caches (the dev server ~15 min of it), ~22 s with the dev server cached.
#
# Usage: bash temporal/ci.sh     (from anywhere)
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS

key=$(cat internal/devserver/go.mod internal/devserver/go.sum internal/devserver/*.go <(go version) | sha256sum | cut -c1-16)
dir="${RUNLET_TEMPORAL_BIN_CACHE:-$(go env GOCACHE)/../runlet-temporal-devserver}/$key"
bin="$dir/devserver"
if [ ! -x "$bin" ]; then
  echo "temporal/ci.sh: building the dev server (once for these sources) into $dir"
  mkdir -p "$dir"
  tmp=$(mktemp "$dir/devserver.XXXXXX")
  (cd internal/devserver && GOFLAGS="-mod=readonly -buildvcs=false" go build -o "$tmp" .)
  mv -f "$tmp" "$bin"
  echo "temporal/ci.sh: dev server built in $((SECONDS - start)) s"
fi
export RUNLET_TEMPORAL_DEVSERVER="$bin"

go vet ./...
go test -race ./...
staticcheck="honnef.co/go/tools/cmd/staticcheck@v0.8.2"
if go run "$staticcheck" -version >/dev/null 2>&1; then
  go run "$staticcheck" ./...
fi

echo "temporal/ci.sh: done in $((SECONDS - start)) s"
