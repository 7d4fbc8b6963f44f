package config

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// pos is where a value was written.
type pos struct {
	line, col int
	value     string // a scalar's value (expanded), to tell whether it changed since
}

// decoder fills Go values from a YAML tree, strictly: every key must be a
// known field and every value of the field's type. It expands ${VAR}
// references in scalar values, records where each value was, and collects
// every problem rather than stopping at the first.
type decoder struct {
	file    string
	lookup  func(string) (string, bool)
	environ func() []string
	errs    []error
	pos     map[string]pos
	// allow lists the variables (Loader.AllowEnv) that values other than
	// credentials may read; cred is set while a credential field (tagged
	// config:"credential") is decoded, which may read any.
	allow []string
	cred  bool

	// The walk's limits (limits.go): values and bytes it may still visit,
	// its nesting, the aliases being expanded (innermost last, and as a
	// set of their anchors' values), and whether a limit stopped it.
	valuesLeft, bytesLeft, depth int
	aliases                      []*yaml.Node
	expanding                    map[*yaml.Node]bool
	stop                         bool
	// raw holds the text as written of scalars whose ${VAR} references
	// were expanded, so messages never show a variable's value (it may be a
	// secret).
	raw map[*yaml.Node]string
	// factories are the Loader's tool factories, whose params types
	// decode the tools' params.
	factories map[string]ToolFactory
}

const maxErrors = 20

func (d *decoder) errorf(n *yaml.Node, field, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	e := &Error{File: d.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// errorAt is errorf for a value whose path is built only if the error is
// kept.
func (d *decoder) errorAt(n *yaml.Node, p *path, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	d.errorf(n, p.String(), format, args...)
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	toolRefType  = reflect.TypeFor[ToolRef]()
	storeType    = reflect.TypeFor[Store]()
)

// parseDocument parses data into its single YAML document's root node.
func (d *decoder) parseDocument(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errs = append(d.errs, &Error{File: d.file, Msg: "the file is empty; it needs at least a model section"})
			return nil
		}
		d.errs = append(d.errs, syntaxError(d.file, err))
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(&extra, "", "a second YAML document (after ---); a config file holds one")
		return nil
	}
	if len(doc.Content) == 0 {
		d.errs = append(d.errs, &Error{File: d.file, Msg: "the file is empty; it needs at least a model section"})
		return nil
	}
	return doc.Content[0]
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(file string, err error) *Error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Msg: "YAML syntax: " + m[2]}
	}
	return &Error{File: file, Msg: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// decode fills v from n; field is v's dotted path, for messages.
func (d *decoder) decode(at *yaml.Node, v reflect.Value, field string) {
	here := &path{key: field}
	n, ok := d.enter(at, here)
	if !ok {
		return
	}
	defer d.leave(at)
	if d.pos != nil && field != "" {
		d.pos[field] = pos{line: n.Line, col: n.Column}
	}
	t := v.Type()
	if isNull(n) && t != toolRefType {
		v.SetZero()
		return
	}
	switch {
	case t == durationType:
		s, ok := d.scalar(n, here, "a duration such as 30s or 2m")
		if !ok {
			return
		}
		dur, err := time.ParseDuration(s.Value)
		if err != nil || dur < 0 {
			d.errorf(n, field, "want a duration such as 30s or 2m, got %s", d.describe(s))
			return
		}
		v.SetInt(int64(dur))
		return
	case t == storeType && n.Kind == yaml.ScalarNode:
		// store: memory; a mapping names a durable store.
		s, ok := d.scalar(n, here, "memory, or a mapping with one of sqlite, postgres and redis")
		if !ok {
			return
		}
		if s.Value != "memory" {
			d.errorf(n, field, "want memory, or a mapping with one of sqlite: {path: FILE}, postgres: {dsn: ...} and redis: {url: ...}; got %s%s",
				d.describe(s), suggest.Hint(s.Value, []string{"memory", "sqlite", "postgres", "redis"}))
			return
		}
		v.FieldByName("Memory").SetBool(true)
		return
	case t == toolRefType:
		d.decodeToolRef(n, v, field)
		if p, ok := d.pos[field]; ok {
			p.value = v.FieldByName("Name").String()
			d.pos[field] = p
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		d.decode(n, v.Elem(), field)
	case reflect.Struct:
		d.decodeStruct(n, v, field)
	case reflect.String:
		s, ok := d.scalar(n, here, "a string")
		if ok {
			v.SetString(s.Value)
			if p, ok := d.pos[field]; ok {
				p.value = s.Value
				d.pos[field] = p
			}
		}
	case reflect.Bool:
		s, ok := d.scalar(n, here, "true or false")
		if !ok {
			return
		}
		if s.ShortTag() != "!!bool" {
			d.errorf(n, field, "want true or false, got %s", d.describe(s))
			return
		}
		var b bool
		_ = s.Decode(&b)
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s, ok := d.scalar(n, here, "an integer")
		if !ok {
			return
		}
		var i int64
		if s.ShortTag() != "!!int" || s.Decode(&i) != nil {
			d.errorf(n, field, "want an integer, got %s", d.describe(s))
			return
		}
		if v.OverflowInt(i) {
			d.errorf(n, field, "%d is out of range for this field", i)
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s, ok := d.scalar(n, here, "an integer")
		if !ok {
			return
		}
		var u uint64
		if s.ShortTag() != "!!int" || s.Decode(&u) != nil {
			d.errorf(n, field, "want a non-negative integer, got %s", d.describe(s))
			return
		}
		if v.OverflowUint(u) {
			d.errorf(n, field, "%d is out of range for this field", u)
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		s, ok := d.scalar(n, here, "a number")
		if !ok {
			return
		}
		var f float64
		if tag := s.ShortTag(); (tag != "!!int" && tag != "!!float") || s.Decode(&f) != nil {
			d.errorf(n, field, "want a number, got %s", d.describe(s))
			return
		}
		v.SetFloat(f)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, field, "want a list (such as [a, b] or one \"- item\" per line), got %s", d.describe(n))
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.decode(item, s.Index(i), field+"."+strconv.Itoa(i))
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.errorf(n, field, "want a mapping of key: value lines, got %s", d.describe(n))
			return
		}
		m := reflect.MakeMapWithSize(t, len(n.Content)/2)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				d.errorf(k, field, "keys must be plain strings")
				continue
			}
			if seen[k.Value] {
				d.errorf(k, field+"."+k.Value, "duplicate key")
				continue
			}
			seen[k.Value] = true
			ev := reflect.New(t.Elem()).Elem()
			d.decode(val, ev, field+"."+shortKey(k.Value))
			m.SetMapIndex(reflect.ValueOf(k.Value), ev)
		}
		v.Set(m)
	case reflect.Interface:
		if g, ok := d.genericValue(n, here); ok && g != nil {
			v.Set(reflect.ValueOf(g))
		}
	default:
		// Only a factory's params type can get here: the program's, not
		// the file's, mistake, but an error all the same.
		d.errorf(n, field, "this program's params type has a field of type %s, which a config cannot hold", t)
	}
}

// fieldName is the YAML key of a struct field: its yaml tag, else its json
// tag (so runlet.Settings and runlet.UsageLimits read as they marshal),
// else its name in lower case (as go.yaml.in/yaml/v3 has it, for a tool
// factory's params type).
func fieldName(f reflect.StructField) string {
	tag, ok := f.Tag.Lookup("yaml")
	if !ok {
		tag, ok = f.Tag.Lookup("json")
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" || !f.IsExported() || f.Anonymous {
		return ""
	}
	if !ok || name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

// keys lists the YAML keys of a struct type, in field order.
func keys(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if name := fieldName(f); name != "" {
			out = append(out, name)
		}
	}
	return out
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, field string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, field, "want a mapping of key: value lines, got %s", d.describe(n))
		return
	}
	t := v.Type()
	index := map[string]int{}
	for i := range t.NumField() {
		if name := fieldName(t.Field(i)); name != "" {
			index[name] = i
		}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, field, "keys must be plain strings")
			continue
		}
		path := join(field, shortKey(k.Value))
		fi, ok := index[k.Value]
		if !ok {
			where := "here"
			if field != "" {
				where = "in " + field
			}
			d.errorf(k, path, "unknown field%s (known %s: %s)", suggest.Hint(k.Value, keys(t)), where, list(keys(t)))
			continue
		}
		if seen[k.Value] {
			d.errorf(k, path, "duplicate key; each field may appear once")
			continue
		}
		seen[k.Value] = true
		cred := d.cred
		d.cred = cred || t.Field(fi).Tag.Get("config") == "credential"
		d.decode(val, v.Field(fi), path)
		d.cred = cred
	}
}

// scalar returns n with ${VAR} references expanded, or reports that n is not
// a scalar (want describes the expected value).
func (d *decoder) scalar(n *yaml.Node, p *path, want string) (*yaml.Node, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorAt(n, p, "want %s, got %s", want, d.describe(n))
		return nil, false
	}
	if !strings.Contains(n.Value, "$") {
		return n, true
	}
	if !d.cred {
		if names := denied(n.Value, func(name string) bool { return allowed(d.allow, name) }); len(names) > 0 {
			d.errorAt(d.via(n), p, "%s", deniedMsg(names))
			return nil, false
		}
	}
	s, err := expand(n.Value, d.lookup, d.environ)
	if err != nil {
		d.errorAt(d.via(n), p, "%s", err.Error())
		return nil, false
	}
	c := *n
	c.Value = s
	if d.raw == nil {
		d.raw = map[*yaml.Node]string{}
	}
	d.raw[&c] = n.Value
	if n.Style == 0 {
		// Plain scalars are typed after expansion, as if the value had been
		// written there: max_turns: ${TURNS:-10} is an integer.
		c.Tag = ""
	}
	return &c, true
}

// generic decodes a free-form value (request options, output_schema) into
// map[string]any, []any, string, bool, int64, float64 or nil, as
// encoding/json would.
func (d *decoder) generic(at *yaml.Node, p *path) (any, bool) {
	n, ok := d.enter(at, p)
	if !ok {
		return nil, false
	}
	defer d.leave(at)
	return d.genericValue(n, p)
}

// genericValue is generic for a node already entered.
func (d *decoder) genericValue(n *yaml.Node, p *path) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				d.errorAt(k, p, "keys must be plain strings")
				return nil, false
			}
			child := &path{parent: p, key: k.Value}
			if _, dup := m[k.Value]; dup {
				d.errorAt(k, child, "duplicate key")
				return nil, false
			}
			v, ok := d.generic(n.Content[i+1], child)
			if !ok {
				return nil, false
			}
			m[k.Value] = v
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			v, ok := d.generic(item, &path{parent: p, index: i, isIndex: true})
			if !ok {
				return nil, false
			}
			s = append(s, v)
		}
		return s, true
	case yaml.ScalarNode:
		s, ok := d.scalar(n, p, "a value")
		if !ok {
			return nil, false
		}
		switch s.ShortTag() {
		case "!!null":
			return nil, true
		case "!!bool":
			var b bool
			if s.Decode(&b) == nil {
				return b, true
			}
		case "!!int":
			var i int64
			if s.Decode(&i) == nil {
				return i, true
			}
		case "!!float":
			var f float64
			if s.Decode(&f) == nil {
				return f, true
			}
		}
		return s.Value, true
	}
	d.errorAt(n, p, "unsupported YAML value")
	return nil, false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" && n.Style == 0
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// describe names a YAML value for a message: `"ten"`, `a list`, `a mapping`.
// An expanded value is shown as written, never with the variable's value.
func (d *decoder) describe(n *yaml.Node) string {
	if raw, ok := d.raw[n]; ok {
		return strconv.Quote(raw) + " (after expanding variables)"
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		switch n.ShortTag() {
		case "!!int", "!!float", "!!bool":
			return v
		}
		return strconv.Quote(v)
	}
	return "an empty value"
}
