//go:build unix

package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/runlet/runlet/runlettest"
)

// The CLI's files hold conversations: its cache directory is 0700 and what
// it writes there or for --store and --record is 0600, whatever the umask;
// a cache directory an older version made 0755 is tightened.
func TestFilesArePrivate(t *testing.T) {
	for _, mask := range []int{0, 0o022} {
		old := syscall.Umask(mask) // the child inherits it
		srv := runlettest.NewOpenAIChatServer()
		env := []string{"OPENAI_BASE_URL=" + srv.BaseURL(), "RUNLET_MODEL=m"}

		cache := t.TempDir()
		srv.Enqueue(runlettest.OpenAIChatReply{Text: "ok"})
		if r := runCLI(t, "", append(env, "XDG_CACHE_HOME="+cache), "run", "--session", "x", "hi"); r.code != 0 {
			t.Fatalf("%s", r)
		}
		// An existing cache directory left open by an older version.
		loose := t.TempDir()
		if err := os.Mkdir(filepath.Join(loose, "runlet"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(loose, "runlet"), 0o755)
		srv.Enqueue(runlettest.OpenAIChatReply{Text: "ok"})
		if r := runCLI(t, "", append(env, "XDG_CACHE_HOME="+loose), "run", "--session", "x", "hi"); r.code != 0 {
			t.Fatalf("%s", r)
		}
		other := t.TempDir()
		store := filepath.Join(other, "new", "s.db")
		cassette := filepath.Join(other, "rec", "run.cassette.json")
		srv.Enqueue(runlettest.OpenAIChatReply{Text: "ok"})
		if r := runCLI(t, "", env, "run", "--session", "x", "--store", store, "--record", cassette, "hi"); r.code != 0 {
			t.Fatalf("%s", r)
		}
		srv.Close()
		syscall.Umask(old)

		want := map[string]fs.FileMode{
			filepath.Join(cache, "runlet"):                0o700,
			filepath.Join(cache, "runlet", "sessions.db"): 0o600,
			filepath.Join(loose, "runlet"):                0o700,
			filepath.Join(other, "new"):                   0o700,
			store:                                         0o600,
			filepath.Join(other, "rec"):                   0o700,
			cassette:                                      0o600,
		}
		for path, mode := range want {
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != mode {
				t.Errorf("umask %03o: %s is %v, want %v", mask, path, got, mode)
			}
		}
	}
}
