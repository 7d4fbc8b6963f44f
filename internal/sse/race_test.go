//go:build race

package sse

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation bounds that rely on the pool are not checked under it.
const raceEnabled = true
