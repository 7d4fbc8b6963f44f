package runlettest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A cassette file over MaxCassetteBytes is refused with an error naming
// the limit, without reading it.
func TestLoadCassetteBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk used, and reading it whole would cost its size.
	if err := f.Truncate(MaxCassetteBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = LoadCassette(path)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if err == nil || !strings.Contains(err.Error(), "MaxCassetteBytes") {
		t.Fatalf("err = %v, want one naming MaxCassetteBytes", err)
	}
	if alloc > 1<<20 {
		t.Errorf("allocated %d MiB refusing a %d MiB file, want it unread", alloc>>20, MaxCassetteBytes>>20)
	}
}
