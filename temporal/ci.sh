#!/usr/bin/env bash
# CI for the nested temporal module (called at the end of .ci/run; the root
# module's ./... does not reach nested modules). It builds the dev server
# binary the integration tests start (once: it is cached under a directory
# keyed on the dev server's go.sum), then runs go vet and go test -race in
# the temporal module.
#
# Usage: bash temporal/ci.sh     (from anywhere)
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS

go vet ./...
go test -race ./...

echo "temporal/ci.sh: done in $((SECONDS - start)) s"
