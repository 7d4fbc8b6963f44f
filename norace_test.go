//go:build !race

package runlet_test

const raceEnabled = false
