package bench_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The footprint programs (footprint/measure.sh compares their sizes and
// start-up times) live under testdata, out of ./...: this test keeps them
// building and doing the same job — the agent, the hand-written program and
// the hand-written one with the JSON Schema library linked in each answer
// the same tool run against the same fake server with the same text.
func TestFootprintProgramsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three programs")
	}
	srv := e2eServer(t)
	dir := t.TempDir()
	var outs []string
	for _, p := range []struct{ name, pkg, tags string }{
		{"agent", "./footprint/testdata/agent", ""},
		{"hand", "./footprint/testdata/hand", ""},
		{"hand-schema", "./footprint/testdata/hand", "footprint_schema"},
	} {
		bin := filepath.Join(dir, p.name)
		build := exec.Command("go", "build", "-trimpath", "-tags="+p.tags, "-o", bin, p.pkg)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", p.name, err, out)
		}
		run := exec.Command(bin)
		run.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=test", "FOOTPRINT_EXIT=")
		out, err := run.Output()
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if got := strings.TrimSpace(string(out)); got != strings.TrimSpace(strings.Repeat("sun ", e2eAnswerDeltas)) {
			t.Fatalf("%s answered %d bytes: %.40q…", p.name, len(got), got)
		}
		outs = append(outs, string(out))
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Error("the programs' outputs differ")
	}
}
