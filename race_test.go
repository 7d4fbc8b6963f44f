//go:build race

package runlet_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so
// allocation bounds are not checked under it.
const raceEnabled = true
