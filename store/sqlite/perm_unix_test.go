//go:build unix

package sqlite_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/store/sqlite"
)

// withUmask runs f with the process umask set to mask (the umask is the
// process's: these tests are not parallel).
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// modes returns the permission bits of every file in dir whose name starts
// with prefix: the database and its -wal, -shm or -journal.
func modes(t *testing.T, dir, prefix string) map[string]fs.FileMode {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fs.FileMode{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Mode().Perm()
	}
	return out
}

// write stores a turn and a checkpoint, so that the WAL and its index exist.
func write(t *testing.T, s *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.AppendSession(ctx, "s", 0, []runlet.Message{runlet.UserText("secret")}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint(ctx, &runlet.Checkpoint{RunID: "r", Messages: []runlet.Message{runlet.UserText("x")}}); err != nil {
		t.Fatal(err)
	}
}

// A new database and every file SQLite makes beside it are readable by
// their owner only, whatever the umask.
func TestNewFilesArePrivate(t *testing.T) {
	for _, mask := range []int{0, 0o022} {
		withUmask(mask, func() {
			dir := t.TempDir()
			s, err := sqlite.Open(context.Background(), filepath.Join(dir, "runlet.db"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, s)
			open := modes(t, dir, "runlet.db")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, ok := open["runlet.db-wal"]; !ok {
				t.Fatalf("umask %03o: no WAL while open: %v", mask, open)
			}
			for name, m := range open {
				if m != 0o600 {
					t.Errorf("umask %03o: %s is %v, want -rw-------", mask, name, m)
				}
			}
		})
	}
}

// An existing file keeps the mode its owner gave it: Open never loosens
// it, and the files SQLite makes beside it take the same mode.
func TestExistingFileKeepsItsMode(t *testing.T) {
	for _, mode := range []fs.FileMode{0o600, 0o640} {
		withUmask(0, func() {
			dir := t.TempDir()
			path := filepath.Join(dir, "runlet.db")
			if err := os.WriteFile(path, nil, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			s, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			write(t, s)
			open := modes(t, dir, "runlet.db")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for name, m := range open {
				if m != mode {
					t.Errorf("%v file: %s is %v", mode, name, m)
				}
			}
		})
	}
}
