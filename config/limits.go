package config

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// DefaultMaxBytes is the size limit of a config file when Loader.MaxBytes
// is zero: 1 MiB, far more than any agent needs. Parsing costs up to about
// 200 bytes of memory per byte of YAML, so the limit also bounds memory.
const DefaultMaxBytes = 1 << 20

// Bounds on what YAML aliases may add to a file. An alias repeats its
// anchor's value, and aliases of aliases repeat it exponentially (the
// "billion laughs"): 700 bytes of YAML can stand for a billion values. The
// YAML parser bounds aliases only when it fills Go values itself; the
// config walks the parsed nodes itself, so it counts them here, wherever
// they are (options, output_schema, lists, nested maps, typed fields).
const (
	// maxAliasValues bounds the values (scalars, lists and mappings)
	// aliases may add to those written in the file.
	maxAliasValues = 100_000
	// maxAliasBytes bounds the text (scalars and mapping keys) aliases may
	// add: one long string repeated by aliases costs nothing to hold, but
	// its every copy is sent with each request.
	maxAliasBytes = 1 << 20
	// maxDepth bounds nesting, aliases included.
	maxDepth = 1000
)

func (l *Loader) maxBytes() int {
	if l.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}

// tooLarge is the error for a file over the size limit.
func (l *Loader) tooLarge(name string) error {
	return &Error{File: name, Msg: fmt.Sprintf("the file is larger than %d bytes, the limit for a config file (Loader.MaxBytes)", l.maxBytes())}
}

// readFile reads the file at path, refusing a regular file over the limit
// unread, and any other after one byte more than the limit.
func (l *Loader) readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > int64(l.maxBytes()) {
		return nil, l.tooLarge(path)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(l.maxBytes())+1))
	if err != nil {
		return nil, err
	}
	if len(data) > l.maxBytes() {
		return nil, l.tooLarge(path)
	}
	return data, nil
}

// budget sets the walk's limits for a document of size bytes: every value
// written in it, plus what aliases may add.
func (d *decoder) budget(root *yaml.Node, size int) {
	nodes := 0
	var count func(*yaml.Node)
	count = func(n *yaml.Node) { // the tree as written: aliases are leaves
		nodes++
		for _, c := range n.Content {
			count(c)
		}
	}
	count(root)
	d.valuesLeft = nodes + maxAliasValues
	d.bytesLeft = size + maxAliasBytes
	d.expanding = map[*yaml.Node]bool{}
}

// enter resolves n if it is an alias and charges its visit against the
// walk's limits. It returns the node to decode, or false when the walk
// must not go into n: n is an alias inside its own anchor's value, or a
// limit is reached (then the whole walk stops). Each successful enter is
// paired with a leave(n).
func (d *decoder) enter(n *yaml.Node, p *path) (*yaml.Node, bool) {
	if d.stop {
		return nil, false
	}
	t := n
	if n.Kind == yaml.AliasNode {
		t = n.Alias
		switch {
		case t == nil || t.Kind == yaml.AliasNode:
			d.errorAt(n, p, "alias *%s names no value", n.Value)
			return nil, false
		case d.expanding[t]:
			d.errorAt(n, p, "recursive alias: *%s is inside the value of its own anchor (line %d)", n.Value, t.Line)
			return nil, false
		}
	}
	d.valuesLeft--
	d.bytesLeft -= len(t.Value)
	if t.Kind == yaml.MappingNode {
		for i := 0; i < len(t.Content); i += 2 {
			d.bytesLeft -= len(t.Content[i].Value)
		}
	}
	if d.valuesLeft < 0 || d.bytesLeft < 0 {
		at := n
		if len(d.aliases) > 0 {
			at = d.aliases[len(d.aliases)-1]
		}
		d.errorAt(at, p, "aliases repeat more than %d values or %d bytes (an alias bomb?); a config file may not expand that far", maxAliasValues, maxAliasBytes)
		d.stop = true
		return nil, false
	}
	if d.depth >= maxDepth {
		d.errorAt(n, p, "nested deeper than %d levels (aliases included)", maxDepth)
		d.stop = true
		return nil, false
	}
	d.depth++
	if n.Kind == yaml.AliasNode {
		d.expanding[t] = true
		d.aliases = append(d.aliases, n)
	}
	return t, true
}

// leave ends the visit of n that enter began.
func (d *decoder) leave(n *yaml.Node) {
	d.depth--
	if n.Kind == yaml.AliasNode {
		delete(d.expanding, n.Alias)
		d.aliases = d.aliases[:len(d.aliases)-1]
	}
}

// via is the alias through which n is being decoded, if any, else n: the
// place to point at, since the value is used there.
func (d *decoder) via(n *yaml.Node) *yaml.Node {
	if k := len(d.aliases); k > 0 && d.aliases[k-1].Alias == n {
		return d.aliases[k-1]
	}
	return n
}

// path is a value's dotted path for messages, such as
// "model.options.a.0", built only when a message needs it: building every
// path on the way down would cost memory quadratic in the nesting, and in
// a key's length times the values under it.
type path struct {
	parent  *path
	key     string // a mapping key; at the root, the path so far
	index   int    // a list index, if isIndex
	isIndex bool
}

// maxKeyInPath bounds each key shown in a path, in bytes.
const maxKeyInPath = 64

func (p *path) String() string {
	if p == nil {
		return ""
	}
	var parts []string
	for ; p != nil; p = p.parent {
		switch {
		case p.isIndex:
			parts = append(parts, strconv.Itoa(p.index))
		case p.parent == nil:
			parts = append(parts, p.key)
		default:
			parts = append(parts, shortKey(p.key))
		}
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(parts[i])
	}
	return b.String()
}

// shortKey is key, cut short for a path if it is long.
func shortKey(key string) string {
	if len(key) <= maxKeyInPath {
		return key
	}
	cut := maxKeyInPath
	for cut > 0 && !utf8.RuneStart(key[cut]) {
		cut--
	}
	return key[:cut] + "…"
}
