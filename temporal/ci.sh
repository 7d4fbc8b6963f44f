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
#    It prints how many packages it has compiled as it goes. With
#    RUNLET_TEMPORAL_ADDRESS set (a running server, e.g. the Temporal CLI's
#    `temporal server start-dev` at 127.0.0.1:7233), nothing is built and
#    the tests use that server.
# 2. Runs go vet, go test -race (RUNLET_TEMPORAL_DEVSERVER pointing at the
#    binary) and staticcheck in the temporal module.
#
# Measured on a shared 2-core machine: ~19 min with empty module and build
# caches (the dev server ~15 min of it), ~140 s with the dev server cached
# (most of it TestLongRunHistoryStaysSmall: 200 turns under -race).
#
# Usage: bash temporal/ci.sh     (from anywhere)
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS

if [ -n "${RUNLET_TEMPORAL_ADDRESS:-}" ]; then
  # A running server (temporal server start-dev: 127.0.0.1:7233, namespace
  # "default", or RUNLET_TEMPORAL_NAMESPACE): no dev server to build.
  echo "temporal/ci.sh: using the Temporal server at $RUNLET_TEMPORAL_ADDRESS (namespace ${RUNLET_TEMPORAL_NAMESPACE:-default})"
else
  key=$(cat internal/devserver/go.mod internal/devserver/go.sum internal/devserver/*.go <(go version) | sha256sum | cut -c1-16)
  dir="${RUNLET_TEMPORAL_BIN_CACHE:-$(go env GOCACHE)/../runlet-temporal-devserver}/$key"
  bin="$dir/devserver"
  if [ ! -x "$bin" ]; then
    total=$(cd internal/devserver && GOFLAGS="-mod=readonly" go list -deps . | wc -l)
    echo "temporal/ci.sh: building the Temporal dev server ($total packages) into $dir, once for these sources."
    echo "temporal/ci.sh: the first build takes 15-25 minutes on a 2-core machine (~2.6 GB of memory while linking);"
    echo "temporal/ci.sh: to use a running server instead (temporal server start-dev), set RUNLET_TEMPORAL_ADDRESS=127.0.0.1:7233."
    mkdir -p "$dir"
    tmp=$(mktemp "$dir/devserver.XXXXXX")
    # go build -v names each package it compiles: count them as progress,
    # pass anything else (errors) through.
    (cd internal/devserver && GOFLAGS="-mod=readonly -buildvcs=false" go build -v -o "$tmp" . 2>&1) | {
      n=0
      while IFS= read -r line; do
        case $line in
        *" "* | *:*) echo "$line" ;;
        *)
          n=$((n + 1))
          if ((n % 100 == 0)); then
            echo "temporal/ci.sh: $n of at most $total packages compiled, $((SECONDS - start)) s"
          fi
          ;;
        esac
      done
      echo "temporal/ci.sh: go build ended after compiling $n packages, $((SECONDS - start)) s"
    }
    mv -f "$tmp" "$bin"
    echo "temporal/ci.sh: dev server built in $((SECONDS - start)) s"
  fi
  export RUNLET_TEMPORAL_DEVSERVER="$bin"
fi

go vet ./...
go test -race ./...
staticcheck="honnef.co/go/tools/cmd/staticcheck@v0.8.2"
if go run "$staticcheck" -version >/dev/null 2>&1; then
  go run "$staticcheck" ./...
fi

echo "temporal/ci.sh: done in $((SECONDS - start)) s"
