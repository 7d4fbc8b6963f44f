package apitest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestExported(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", `package p
type T struct{}
type g[X any] struct{}
func (T) M() {}
func (*T) n() {}
func (g[X]) M() {}
func F() {}
var V, w = 1, 2
const (C = 1; d = 2)
type (U int; u int)
`)
	write("b.go", "package p\nfunc FromB() {}\n")
	write("a_test.go", "package p\nfunc TestOnly() {}\n")
	got := Exported(t, dir)
	want := []string{"C", "F", "FromB", "T", "T.M", "U", "V"}
	if !slices.Equal(got, want) {
		t.Errorf("Exported = %v, want %v", got, want)
	}
	if got := Exported(t, dir, "b*.go"); !slices.Equal(got, []string{"FromB"}) {
		t.Errorf("Exported(b*.go) = %v", got)
	}
	Check(t, want, dir)
}
