#!/bin/sh
# Footprint of a minimal Runlet agent (testdata/agent: runlet +
# providers/openai; in testdata so the dependency guard and ./... skip it)
# against a hand-written net/http program of the same job (testdata/hand): stripped
# binary sizes, and start-up time (exec to ready to send, FOOTPRINT_EXIT=1),
# the median of 101 runs of each, interleaved.
#
#	sh internal/bench/footprint/measure.sh
set -eu
cd "$(dirname "$0")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in agent hand; do
	go build -trimpath -ldflags='-s -w' -o "$out/$p" "./testdata/$p"
done
a=$(wc -c <"$out/agent")
h=$(wc -c <"$out/hand")
echo "stripped size: agent $a bytes, hand-written $h bytes, ratio $(echo "scale=3; $a/$h" | bc)"
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
