//go:build race

package openai

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation counts that rely on a pool are not checked under it.
const raceEnabled = true
