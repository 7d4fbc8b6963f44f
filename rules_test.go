package runlet_test

// The three rules of STYLE.md ("Three rules a test keeps"), kept here.

import (
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/runlet/runlet"

// tourExamples are the package doc's tour snippets' examples, in order.
var tourExamples = []string{"Example_run", "Example_tool", "Example_stream", "Example_typedOutput", "Example_sessions", "Example_severalAgents"}

// docSnippets returns the package doc's code blocks under "# A tour".
func docSnippets(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "doc.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var p comment.Parser
	d := p.Parse(f.Doc.Text())
	var snippets []string
	in := false
	for _, b := range d.Content {
		switch b := b.(type) {
		case *comment.Heading:
			in = len(b.Text) == 1 && b.Text[0] == comment.Plain("A tour")
		case *comment.Code:
			if in {
				snippets = append(snippets, b.Text)
			}
		}
	}
	return snippets
}

// exampleBodies maps each example function of the root's *example_test.go
// files to its source, and each file to its imports.
func exampleBodies(t *testing.T) (bodies map[string]string, imports map[string][]string) {
	t.Helper()
	bodies, imports = map[string]string{}, map[string][]string{}
	files, _ := filepath.Glob("*example_test.go")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			imports[name] = append(imports[name], path)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Example") {
				bodies[fn.Name.Name] = string(src[fset.Position(fn.Body.Pos()).Offset:fset.Position(fn.Body.End()).Offset])
			}
		}
	}
	return bodies, imports
}

// The tour's snippets are the runnable examples' code: every line of a
// snippet is a line of its example, except the line making the provider's
// model, which the example's scripted model replaces.
func TestDocTourRuns(t *testing.T) {
	snippets := docSnippets(t)
	if len(snippets) != len(tourExamples) {
		t.Fatalf("doc.go's tour has %d snippets, want %d (%v)", len(snippets), len(tourExamples), tourExamples)
	}
	bodies, _ := exampleBodies(t)
	for i, sn := range snippets {
		body, ok := bodies[tourExamples[i]]
		if !ok {
			t.Errorf("snippet %d: no %s", i+1, tourExamples[i])
			continue
		}
		lines := map[string]bool{}
		for l := range strings.Lines(body) {
			lines[strings.TrimSpace(l)] = true
		}
		for l := range strings.Lines(sn) {
			if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "openai.") && !lines[l] {
				t.Errorf("snippet %d: %q is not in %s", i+1, l, tourExamples[i])
			}
		}
	}
}

// Rule 1: running an agent, adding a tool, streaming and typed output need
// only the root and one provider. The examples import the standard
// library, the root and runlettest (standing in for the provider); the
// tour's snippets name no package but the root, openai and the standard
// library's.
func TestRuleRootAndOneProvider(t *testing.T) {
	_, imports := exampleBodies(t)
	for file, paths := range imports {
		for _, p := range paths {
			if strings.Contains(strings.Split(p, "/")[0], ".") && p != modulePath && p != modulePath+"/runlettest" {
				t.Errorf("%s imports %s: an example needs only the root and one provider", file, p)
			}
		}
	}
	snippets := docSnippets(t)
	all := strings.Join(snippets, "\n")
	defined := map[string]bool{}
	for _, re := range []string{`(\w+)(?:, (\w+))? :=`, `(?:\(|, )(\w+) [\w.*]+`} {
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(all, -1) {
			for _, v := range m[1:] {
				defined[v] = true
			}
		}
	}
	allowed := []string{"runlet", "openai", "context", "fmt", "log"}
	for i, sn := range snippets {
		for _, m := range regexp.MustCompile(`\b([a-z]\w*)\.[A-Z]`).FindAllStringSubmatch(sn, -1) {
			if !slices.Contains(allowed, m[1]) && !defined[m[1]] {
				t.Errorf("tour snippet %d names package %s", i+1, m[1])
			}
		}
	}
}

// rootNames returns the root's exported top-level names.
func rootNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, f := range parseDir(t, ".") {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

// parseDir parses dir's non-test Go files.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	var files []*ast.File
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), m, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// packageDirs returns this module's package directories other than the
// root, without testdata and nested modules (temporal/).
func packageDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == "." {
			return err
		}
		if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
			return filepath.SkipDir
		}
		if m, _ := filepath.Glob(filepath.Join(p, "*.go")); len(m) > 0 {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// contractList returns the names listed in STYLE.md's contract list: the
// words of the fenced block after the line "<!-- contract list -->",
// without the "group:" word that starts each line.
func contractList(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("STYLE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- contract list -->\n```\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("STYLE.md has no contract list")
	}
	names := map[string]bool{}
	for l := range strings.Lines(block) {
		_, list, _ := strings.Cut(l, ":")
		for _, n := range strings.Fields(list) {
			names[n] = true
		}
	}
	return names
}

// Rule 2: every root name that no example, README snippet or other
// package of this module uses is on STYLE.md's contract list — and every
// name on the list is a root name that needs to be there.
func TestRuleUnusedNamesAreListed(t *testing.T) {
	names := rootNames(t)
	used := map[string]bool{}
	use := func(src []byte) {
		for _, m := range regexp.MustCompile(`runlet\.([A-Z]\w*)`).FindAllSubmatch(src, -1) {
			used[string(m[1])] = true
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	use(readme)
	examples, _ := filepath.Glob("*example_test.go")
	for _, dir := range packageDirs(t) {
		m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				examples = append(examples, f)
			}
		}
	}
	for _, f := range examples {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		use(src)
	}
	listed := contractList(t)
	var unlisted, stale []string
	for n := range names {
		if !used[n] && !listed[n] {
			unlisted = append(unlisted, n)
		}
	}
	for n := range listed {
		if !names[n] || used[n] {
			stale = append(stale, n)
		}
	}
	sort.Strings(unlisted)
	sort.Strings(stale)
	if len(unlisted) > 0 {
		t.Errorf("root names no example, README snippet or other package uses, missing from STYLE.md's contract list (use them, list them or remove them): %v", unlisted)
	}
	if len(stale) > 0 {
		t.Errorf("STYLE.md's contract list names what is not a root name or is used: %v", stale)
	}
}

// Rule 3: one name per thing across packages. Checked forms: (a) no
// package of this module exports a variable that aliases another
// package's name (var ErrX = runlet.ErrX) or reuses a root name (a
// provider-local ErrMalformedStream); (b) no interface type literal
// outside a type declaration has the methods of one of the root's named
// interfaces (use the name, runlet.PolicyTool, not
// interface{ Policy() ToolPolicy }).
func TestRuleOneNamePerThing(t *testing.T) {
	root := rootNames(t)
	rootIfaces := map[string]string{} // sorted method names → interface name
	for _, f := range parseDir(t, ".") {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.IsExported() {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					if k := methodKey(it); k != "" {
						rootIfaces[k] = ts.Name.Name
					}
				}
			}
			return true
		})
	}
	for _, dir := range append([]string{"."}, packageDirs(t)...) {
		for _, f := range parseDir(t, dir) {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !n.IsExported() {
							continue
						}
						if dir != "." && root[n.Name] {
							t.Errorf("%s exports %s, a root name: use runlet.%s", dir, n.Name, n.Name)
						}
						if i < len(vs.Values) {
							if sel, ok := vs.Values[i].(*ast.SelectorExpr); ok {
								if pkg, ok := sel.X.(*ast.Ident); ok && sel.Sel.IsExported() {
									t.Errorf("%s: %s is an alias of %s.%s: use that name", dir, n.Name, pkg.Name, sel.Sel.Name)
								}
							}
						}
					}
				}
			}
			named := map[*ast.InterfaceType]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				if ts, ok := n.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						named[it] = true
					}
				}
				if it, ok := n.(*ast.InterfaceType); ok && !named[it] {
					if name, ok := rootIfaces[methodKey(it)]; ok {
						t.Errorf("%s: an interface literal with the methods of runlet.%s: use the name", dir, name)
					}
				}
				return true
			})
		}
	}
}

// methodKey is an interface's own method names, sorted and joined.
func methodKey(it *ast.InterfaceType) string {
	var names []string
	for _, m := range it.Methods.List {
		if _, ok := m.Type.(*ast.FuncType); ok {
			for _, n := range m.Names {
				names = append(names, n.Name)
			}
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
