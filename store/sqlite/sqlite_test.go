package sqlite_test

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/sqlite"
	"github.com/runlet/runlet/store/storetest"
)

func TestMain(m *testing.M) {
	if crashHelper() {
		return
	}
	goleak.VerifyTestMain(m)
}

// open opens a fresh database file in a temporary directory, closed at the
// end of the test.
func open(t testing.TB, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "runlet.db"), opts...)
}

func openAt(t testing.TB, path string, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runlet.Store { return open(t) })
}

// skipSizeTests skips, in the variants of the suite below, the subtests
// about the size of values (megabytes, a thousand messages): how the store
// is shared or where its file lives changes nothing for them, TestContract
// runs them, and under the race detector they are most of the package's
// time (it outran go test's 10-minute timeout with -count=3 on a busy
// machine).
func skipSizeTests(t *testing.T) {
	switch path.Base(t.Name()) {
	case "Large", "LargeMessage", "ThousandMessages":
		t.Skip("size tests run in TestContract")
	}
}

func TestContractSharedFile(t *testing.T) {
	// One file for the whole suite, as an application would have.
	s := open(t, sqlite.WithSynchronous("NORMAL"))
	storetest.Run(t, func(t *testing.T) runlet.Store { skipSizeTests(t); return s })
}

func TestContractMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runlet.Store { skipSizeTests(t); return openAt(t, ":memory:") })
}

func TestContractPathNeedsEscaping(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "store.db")
	s := openAt(t, path)
	if err := s.AppendSession(t.Context(), "s", 0, []runlet.Message{runlet.UserText("hi")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not created at the given path: %v", err)
	}
}

func BenchmarkStore(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) runlet.Store { return open(b) })
}

func BenchmarkStoreSyncNormal(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) runlet.Store { return open(b, sqlite.WithSynchronous("NORMAL")) })
}

// TestContractTwoStoresOneFile runs the suite over two Stores on one file,
// as two processes would use it: their writes meet in SQLite's lock, not in
// one Store's write queue.
func TestContractTwoStoresOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	a, b := openAt(t, path), openAt(t, path)
	storetest.Run(t, func(t *testing.T) runlet.Store { skipSizeTests(t); return storetest.Alternate(a, b) })
}
