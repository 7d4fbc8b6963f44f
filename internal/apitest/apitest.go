// Package apitest lists a package's exported API, for tests that pin it:
// a name that appears in a package's API is a promise, so adding or
// removing one should be a decision a test makes visible.
package apitest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Exported returns the exported identifiers declared by the non-test Go
// files in dir, sorted: top-level names as "Name", methods as
// "Type.Method" (on exported types only). With patterns (path.Match
// patterns on file names, such as "replay*.go") only the files matching
// one of them count.
func Exported(t testing.TB, dir string, patterns ...string) []string {
	t.Helper()
	keep := func(name string) bool {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return false
		}
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return len(patterns) == 0
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, e := range entries {
		if e.IsDir() || !keep(e.Name()) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			names = append(names, declNames(d)...)
		}
	}
	slices.Sort(names)
	return names
}

func declNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		typ := d.Recv.List[0].Type
		if s, ok := typ.(*ast.StarExpr); ok {
			typ = s.X
		}
		if ix, ok := typ.(*ast.IndexExpr); ok { // a generic type
			typ = ix.X
		}
		if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
			names = append(names, id.Name+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					names = append(names, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// Check fails t, listing the differences, unless the files of dir that
// match patterns (all files without patterns) export exactly want, in any
// order.
func Check(t testing.TB, want []string, dir string, patterns ...string) {
	t.Helper()
	got := Exported(t, dir, patterns...)
	want = slices.Sorted(slices.Values(want))
	for _, n := range got {
		if _, found := slices.BinarySearch(want, n); !found {
			t.Errorf("%s exports %s, which is not in its API list: unexport it, or add it to the list if users need it", dir, n)
		}
	}
	for _, n := range want {
		if _, found := slices.BinarySearch(got, n); !found {
			t.Errorf("%s no longer exports %s: remove it from the API list", dir, n)
		}
	}
}
