package storetest_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runlet.Store { return runlet.NewMemoryStore() })
}

func TestSharedMemoryStore(t *testing.T) {
	// One store for every subtest: the suite's IDs never collide.
	s := runlet.NewMemoryStore()
	storetest.Run(t, func(t *testing.T) runlet.Store { return s })
}

func BenchmarkMemoryStore(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) runlet.Store { return runlet.NewMemoryStore() })
}

func TestAlternateMemoryStore(t *testing.T) {
	// Alternating over one store is that store.
	s := runlet.NewMemoryStore()
	storetest.Run(t, func(t *testing.T) runlet.Store { return storetest.Alternate(s, s) })
}
