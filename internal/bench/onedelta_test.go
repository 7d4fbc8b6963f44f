package bench_test

import "testing"

// The streamed tool run with the 4,000-byte answer in one delta: where a
// per-stream buffer, not per-delta work, is most of what a run allocates.
//
//	go test -run '^$' -bench OneDelta -benchmem -count 6 ./internal/bench

func BenchmarkE2EOneDeltaRunletStream(b *testing.B) { benchRunletStream(b, e2eServerDeltas(b, 1), 1) }

func BenchmarkE2EOneDeltaHandWrittenStream(b *testing.B) { benchHandStream(b, e2eServerDeltas(b, 1)) }
