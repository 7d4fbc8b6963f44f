#!/bin/sh
# Footprint of a minimal Runlet agent (testdata/agent: runlet +
# providers/openai; in testdata so the dependency guard and ./... skip it)
# against a hand-written net/http program of the same job (testdata/hand): stripped
# binary sizes, and start-up time (exec to ready to send, FOOTPRINT_EXIT=1),
# the median of 101 runs of each, interleaved. It also builds the
# hand-written program with a blank import of the JSON Schema library
# (-tags footprint_schema), whose package initialisation alone links regexp,
# log/slog and math/big: the floor of any program that imports the root.
#
#	sh internal/bench/footprint/measure.sh
set -eu
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in agent hand; do
	go build -trimpath -ldflags='-s -w' -o "$out/$p" "./testdata/$p"
done
go build -trimpath -ldflags='-s -w' -tags footprint_schema -o "$out/hand-schema" ./testdata/hand
a=$(wc -c <"$out/agent")
h=$(wc -c <"$out/hand")
s=$(wc -c <"$out/hand-schema")
echo "stripped size: agent $a bytes, hand-written $h bytes, ratio $(echo "scale=3; $a/$h" | bc)"
echo "hand-written + a blank import of jsonschema-go (the root package's one dependency): $s bytes, ratio $(echo "scale=3; $s/$h" | bc); agent to it: $(echo "scale=3; $a/$s" | bc)"
for i in $(seq 101); do
	for p in agent hand; do
		s=$(date +%s%N)
		FOOTPRINT_EXIT=1 "$out/$p"
		e=$(date +%s%N)
		echo "$p $((e - s))"
	done
done >"$out/times"
med() { grep "^$1 " "$out/times" | cut -d' ' -f2 | sort -n | sed -n 51p; }
ma=$(med agent)
mh=$(med hand)
echo "start-up (median of 101): agent $((ma / 1000)) µs, hand-written $((mh / 1000)) µs, ratio $(echo "scale=3; $ma/$mh" | bc)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
