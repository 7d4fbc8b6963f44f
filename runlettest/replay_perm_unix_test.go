//go:build unix

package runlettest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// A saved cassette holds conversations: a new one is 0600 in a new 0700
// directory, whatever the umask, and an existing one keeps its mode.
func TestCassetteSaveIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "rec", "a.cassette.json")
	c := &runlettest.Cassette{}
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept.cassette.json")
	if err := os.WriteFile(kept, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := c.Save(kept); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]fs.FileMode{filepath.Dir(path): 0o700, path: 0o600, kept: 0o640} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s is %v, want %v", path, got, want)
		}
	}
}
