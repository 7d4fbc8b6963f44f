//go:build race

package mcp_test

// raceEnabled: the race detector doubles what io.ReadAll allocates, so
// memory bounds are looser under it.
const raceEnabled = true
