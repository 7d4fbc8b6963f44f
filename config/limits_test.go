package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/runlet/runlet/config"
)

// heapGuard is the heap at which measure stops the test binary: a
// regression must stop the test, not the machine.
const heapGuard = 512 << 20

// measure runs f and returns the bytes it allocated. It panics, ending the
// test binary, if the heap grows past heapGuard or f runs for 30 s; a
// runaway recursion overflows a 64 MiB stack instead of a 1 GB one.
func measure(t *testing.T, f func()) uint64 {
	t.Helper()
	defer debug.SetMaxStack(debug.SetMaxStack(64 << 20))
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if metrics.Read(s); s[0].Value.Uint64() > heapGuard {
				panic(fmt.Sprintf("%s: heap over %d MiB", t.Name(), heapGuard>>20))
			}
		}
	}()
	defer func() { close(stop); <-watched }()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		panic(t.Name() + ": still decoding after 30 s")
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// laughs is a "billion laughs" of depth levels of ten aliases each, as
// YAML lines under indent: mapping or list values, in flow style.
func laughs(indent string, levels int, maps bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%sl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n", indent)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "%sl%d: &l%d ", indent, i, i)
		open, end := "[", "]"
		if maps {
			open, end = "{", "}"
		}
		b.WriteString(open)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			if maps {
				fmt.Fprintf(&b, "k%d: ", j)
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString(end + "\n")
	}
	return b.String()
}

const modelHead = "model:\n  provider: openai\n  name: m\n"

// Aliases that would repeat a value a billion times, or loop, are refused
// quickly, in little memory, at the alias, wherever they are: the free-form
// values (options, output_schema, at any depth, in lists and maps) and the
// typed ones. yaml.v3 bounds aliases only when it fills Go values; the
// config walks yaml.Node trees itself, so it must bound them itself.
func TestAliasBombsAndLoops(t *testing.T) {
	long := strings.Repeat("x", 8<<10)
	tests := []struct {
		name, yaml, want string
		line             int // where the error points, when not 0
	}{
		{"options, lists", modelHead + "  options:\n" + laughs("    ", 9, false), "alias bomb", 0},
		{"options, nested maps", modelHead + "  options:\n    deep:\n" + laughs("      ", 9, true), "alias bomb", 0},
		{"output_schema", modelHead + "output_schema:\n  type: object\n  $defs:\n" + laughs("    ", 9, true), "alias bomb", 0},
		{"options, one long string", modelHead + "  options:\n    s: &s " + long + "\n    l: [" + strings.Repeat("*s, ", 300) + "*s]\n", "alias bomb", 0},
		{"stop_sequences, one long string", "s: &s " + long + "\n" + modelHead + "  settings:\n    stop_sequences: [" + strings.Repeat("*s, ", 300) + "*s]\n", "alias bomb", 0},
		{"mcp_servers, repeated", "s: &s {name: a, command: x, args: [" + strings.Repeat("*s, ", 0) + long + "]}\n" + modelHead + "mcp_servers: [" + strings.Repeat("*s, ", 300) + "*s]\n", "alias bomb", 0},
		{"options, list in itself", modelHead + "  options:\n    a: &x [*x]\n", "recursive alias", 5},
		{"options, map in itself", modelHead + "  options:\n    a: &x {b: {c: [1, *x]}}\n", "recursive alias", 5},
		{"output_schema in itself", modelHead + "output_schema: &s\n  type: object\n  properties:\n    self: *s\n", "recursive alias", 7},
		{"model in its options", "model: &m\n  provider: openai\n  name: m\n  options: {again: *m}\n", "recursive alias", 4},
		{"the file in its options", "&root\n" + modelHead + "  options: {again: *root}\n", "recursive alias", 5},
		{"deep nesting", modelHead + "  options: {a: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "}\n", "nested deeper than", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			start := time.Now()
			alloc := measure(t, func() { _, err = (&config.Loader{}).Decode("bomb.yaml", []byte(tt.yaml)) })
			t.Logf("%d bytes of YAML: refused in %v, %d KiB allocated", len(tt.yaml), time.Since(start).Round(time.Millisecond), alloc>>10)
			var ce *config.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %.500v, want a *config.Error saying %q", err, tt.want)
			}
			for _, e := range unjoin(err) {
				if strings.Contains(e.Error(), tt.want) {
					ce = e.(*config.Error)
				}
			}
			if ce.File != "bomb.yaml" || ce.Line == 0 || (tt.line != 0 && ce.Line != tt.line) {
				t.Errorf("error at %s:%d, want bomb.yaml:%d: %v", ce.File, ce.Line, tt.line, ce)
			}
			if alloc > 32<<20 {
				t.Errorf("allocated %d MiB; want under 32", alloc>>20)
			}
		})
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Aliases a config really uses (shared options or schema parts) still work,
// and a value repeated under the limits keeps its content.
func TestAliasesWithinLimits(t *testing.T) {
	y := modelHead + "  options:\n" + laughs("    ", 3, false) + "output_schema:\n  type: object\n  properties:\n    a: &str {type: string}\n    b: *str\n"
	f, err := (&config.Loader{}).Decode("ok.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	l3 := f.Model.Options["l3"].([]any)
	if len(l3) != 10 || len(l3[9].([]any)[9].([]any)) != 10 {
		t.Errorf("l3 = %v", l3)
	}
	props := f.OutputSchema["properties"].(map[string]any)
	if fmt.Sprint(props["b"]) != "map[type:string]" {
		t.Errorf("properties = %v", props)
	}
}

// A large file costs memory in proportion to its size, never to the
// square of its nesting or of its keys' length times their values.
func TestLargeFileBoundedMemory(t *testing.T) {
	key := strings.Repeat("k", 400<<10)
	tests := []struct{ name, yaml string }{
		{"long key over many values", modelHead + "  options:\n    ? " + key + "\n    : [" + strings.Repeat("0,", 200<<10) + "0]\n"},
		{"many deep lists", modelHead + "  options: {a: [" + strings.Repeat(strings.Repeat("[", 990)+strings.Repeat("]", 990)+",", 200) + "0]}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			alloc := measure(t, func() { _, err = (&config.Loader{}).Decode("big.yaml", []byte(tt.yaml)) })
			t.Logf("%d KiB of YAML: %d MiB allocated", len(tt.yaml)>>10, alloc>>20)
			if err != nil {
				t.Fatal(err)
			}
			if limit := uint64(300 * len(tt.yaml)); alloc > limit {
				t.Errorf("allocated %d MiB for %d KiB of YAML; want under %d MiB", alloc>>20, len(tt.yaml)>>10, limit>>20)
			}
		})
	}
}

// A file over the size limit is refused before it is read whole, naming
// the file and the limit; Loader.MaxBytes changes the limit.
func TestFileSizeLimit(t *testing.T) {
	dir := t.TempDir()
	small := modelHead + "instructions: hi\n"
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(small+"# "+strings.Repeat("x", config.DefaultMaxBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	alloc := measure(t, func() { _, err = config.Load(big, nil) })
	var ce *config.Error
	if !errors.As(err, &ce) || ce.File != big || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("err = %v", err)
	}
	if alloc > 256<<10 {
		t.Errorf("allocated %d KiB to refuse it", alloc>>10)
	}

	ok := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(ok, []byte(small), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (&config.Loader{MaxBytes: len(small)}).DecodeFile(ok); err != nil {
		t.Errorf("a file of exactly MaxBytes: %v", err)
	}
	if _, err := (&config.Loader{MaxBytes: len(small) - 1}).DecodeFile(ok); err == nil || !strings.Contains(err.Error(), "Loader.MaxBytes") {
		t.Errorf("a file over MaxBytes: %v", err)
	}
	if _, err := (&config.Loader{MaxBytes: 10}).Decode("x.yaml", []byte(small)); err == nil || !strings.HasPrefix(err.Error(), "x.yaml: ") {
		t.Errorf("Decode of data over MaxBytes: %v", err)
	}
}

// What yaml.v3 guards itself, and why the config must count: decoding an
// alias bomb into Go values fails ("excessive aliasing"), but decoding it
// into a yaml.Node, as the config does to report lines and columns,
// succeeds at once and leaves a graph whose walk, following aliases, is a
// billion values long.
func TestYAMLv3GuardsOnlyGoValues(t *testing.T) {
	bomb := []byte(laughs("", 9, false))
	var v any
	if err := yaml.Unmarshal(bomb, &v); err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("into any: %v", err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(bomb, &n); err != nil {
		t.Errorf("into yaml.Node: %v", err)
	}
	if l9 := n.Content[0].Content[19]; l9.Kind != yaml.SequenceNode || l9.Content[0].Kind != yaml.AliasNode {
		t.Errorf("l9 = %+v", l9)
	}
}
