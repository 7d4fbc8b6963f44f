#!/usr/bin/env bash
# CI for the nested cloud module (called from .ci/run; the root module's
# ./... does not reach nested modules): the cloud adapters (Bedrock, Vertex
# AI, Azure) and the CLI built with them. Their tests run against fake
# servers on loopback; no cloud account or credential is needed. The
# example modules under ../examples that use them are tested too.
#
# Usage: bash cloud/ci.sh     (from anywhere)
set -euo pipefail
cd "$(dirname "$0")"
start=$SECONDS

go vet ./...
go test -race ./...
staticcheck="honnef.co/go/tools/cmd/staticcheck@v0.8.2"
if go run "$staticcheck" -version >/dev/null 2>&1; then
  go run "$staticcheck" ./...
else
  echo "cloud/ci.sh: staticcheck could not be fetched from the module proxy; skipped" >&2
fi

# The examples that use the cloud adapters (examples/bedrock, ...) are
# modules of their own beside it, so that the main module never carries a
# cloud SDK: each is vetted and tested here (offline, on the fakes).
for mod in ../examples/*/go.mod; do
  [ -e "$mod" ] || continue
  dir=$(dirname "$mod")
  echo "cloud/ci.sh: $dir"
  # -mod=mod: the example's go.sum may lag behind a dependency the cloud
  # module added since; the proxy fills it in rather than failing CI.
  (cd "$dir" && GOFLAGS=-mod=mod go vet ./... && GOFLAGS=-mod=mod go test -race ./...)
done

echo "cloud/ci.sh: done in $((SECONDS - start)) s"
