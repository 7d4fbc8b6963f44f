package runlet

import (
	"bytes"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// quickSchema is a tool's input schema compiled once, when the tool is
// made, for the common case: the object schemas jsonschema.For infers
// (type, properties, required, additionalProperties, items) and string
// enums. It checks arguments in place, without decoding them into
// intermediate values, and answers only "certainly valid" or "not sure": an
// argument it cannot vouch for (an escaped property name, 1.0 for an
// integer, a failed check) goes to the full validator, which decides and
// words the error. So the quick check never changes what is accepted.
//
// A nil *quickSchema accepts any value.
type quickSchema struct {
	types    uint8 // allowed JSON types (qNull...); 0: any
	props    []quickProp
	required uint64 // bit i: props[i] is required
	extra    extraRule
	extraS   *quickSchema // schema of other properties when extra == extraSchema
	items    *quickSchema
	enum     []string // allowed strings; nil: no enum
}

type quickProp struct {
	name string
	s    *quickSchema
}

type extraRule uint8

const (
	extraAny extraRule = iota
	extraNone
	extraSchema
)

const (
	qNull uint8 = 1 << iota
	qBool
	qObject
	qArray
	qNumber
	qInteger
	qString
)

var quickTypes = map[string]uint8{"null": qNull, "boolean": qBool, "object": qObject, "array": qArray, "number": qNumber, "integer": qInteger, "string": qString}

// compileQuick returns s compiled, or nil when s uses anything beyond the
// subset (then every call goes to the full validator).
func compileQuick(s *jsonschema.Schema) *quickSchema {
	q, ok := compileQuickNode(s, 0)
	if !ok || q == nil {
		return nil
	}
	return q
}

func compileQuickNode(s *jsonschema.Schema, depth int) (*quickSchema, bool) {
	if s == nil {
		return nil, true
	}
	if depth > 32 {
		return nil, false
	}
	// Everything but the supported keywords and annotations must be unset.
	rest := *s
	rest.Type, rest.Types, rest.Properties, rest.Required = "", nil, nil, nil
	rest.AdditionalProperties, rest.Items, rest.Enum = nil, nil, nil
	rest.Title, rest.Description, rest.Default, rest.Examples, rest.Comment = "", "", nil, nil, ""
	rest.Deprecated, rest.ReadOnly, rest.WriteOnly, rest.PropertyOrder, rest.Format = false, false, false, nil, ""
	if !reflect.ValueOf(rest).IsZero() {
		return nil, false
	}
	q := &quickSchema{}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, t := range types {
		bit, ok := quickTypes[t]
		if !ok {
			return nil, false
		}
		q.types |= bit
	}
	if q.types&qNumber != 0 {
		q.types |= qInteger
	}
	for _, v := range s.Enum {
		str, ok := v.(string)
		if !ok {
			return nil, false
		}
		q.enum = append(q.enum, str)
	}
	if s.Enum != nil && q.enum == nil {
		q.enum = []string{} // enum: [] admits nothing
	}
	for name, ps := range s.Properties {
		c, ok := compileQuickNode(ps, depth+1)
		if !ok {
			return nil, false
		}
		q.props = append(q.props, quickProp{name: name, s: c})
	}
	for _, name := range s.Required {
		i := q.prop(name)
		if i < 0 {
			q.props = append(q.props, quickProp{name: name})
			i = len(q.props) - 1
		}
		if i >= 64 {
			return nil, false
		}
		q.required |= 1 << i
	}
	if len(q.props) > 64 {
		return nil, false
	}
	switch ap := s.AdditionalProperties; {
	case ap == nil || reflect.ValueOf(*ap).IsZero():
	case isFalseSchema(ap):
		q.extra = extraNone
	default:
		c, ok := compileQuickNode(ap, depth+1)
		if !ok {
			return nil, false
		}
		q.extra, q.extraS = extraSchema, c
	}
	var ok bool
	if q.items, ok = compileQuickNode(s.Items, depth+1); !ok {
		return nil, false
	}
	return q, true
}

// isFalseSchema reports whether s is the schema false ({"not": {}}).
func isFalseSchema(s *jsonschema.Schema) bool {
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	rest := *s
	rest.Not = nil
	return reflect.ValueOf(rest).IsZero()
}

func (q *quickSchema) prop(name string) int {
	for i := range q.props {
		if q.props[i].name == name {
			return i
		}
	}
	return -1
}

// valid reports whether data, which must be valid JSON (json.Valid), is
// certainly valid against q. false means "not sure".
func (q *quickSchema) valid(data []byte) bool {
	i, ok := q.check(data, skipSpace(data, 0))
	return ok && skipSpace(data, i) == len(data)
}

func (q *quickSchema) allows(t uint8) bool { return q.types == 0 || q.types&t != 0 }

// check checks the value at data[i:] and returns the index after it.
func (q *quickSchema) check(data []byte, i int) (int, bool) {
	if q == nil {
		return skipValue(data, i)
	}
	if q.enum != nil && data[i] != '"' {
		return 0, false
	}
	switch c := data[i]; {
	case c == '{':
		if !q.allows(qObject) {
			return 0, false
		}
		return q.checkObject(data, i)
	case c == '[':
		if !q.allows(qArray) {
			return 0, false
		}
		i = skipSpace(data, i+1)
		if data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = q.items.check(data, i); !ok {
				return 0, false
			}
			i = skipSpace(data, i)
			if data[i] == ']' {
				return i + 1, true
			}
			i = skipSpace(data, i+1) // ','
		}
	case c == '"':
		if !q.allows(qString) {
			return 0, false
		}
		end, escaped := scanString(data, i)
		if q.enum != nil {
			if escaped || !containsString(q.enum, data[i+1:end-1]) {
				return 0, false
			}
		}
		return end, true
	case c == 't' || c == 'f':
		if !q.allows(qBool) {
			return 0, false
		}
		return skipValue(data, i)
	case c == 'n':
		return i + 4, q.allows(qNull)
	default:
		end, integral, fits := scanNumber(data, i)
		return end, fits && (q.allows(qNumber) || (integral && q.allows(qInteger)))
	}
}

func (q *quickSchema) checkObject(data []byte, i int) (int, bool) {
	var seen uint64
	i = skipSpace(data, i+1)
	for data[i] != '}' {
		end, escaped := scanString(data, i)
		if escaped {
			return 0, false
		}
		key := data[i+1 : end-1]
		i = skipSpace(data, skipSpace(data, end)+1) // past ':'
		var s *quickSchema
		k := -1
		for j := range q.props {
			if q.props[j].name == string(key) {
				k = j
				break
			}
		}
		switch {
		case k >= 0:
			seen |= 1 << k
			s = q.props[k].s
		case q.foldsToProp(key):
			return 0, false // "PATH" for "path": see caseTwins
		case q.extra == extraNone:
			return 0, false
		case q.extra == extraSchema:
			s = q.extraS
		}
		var ok bool
		if i, ok = s.check(data, i); !ok {
			return 0, false
		}
		i = skipSpace(data, i)
		if data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return i + 1, seen&q.required == q.required
}

// foldsToProp reports whether key is one of q's properties but for case.
func (q *quickSchema) foldsToProp(key []byte) bool {
	for j := range q.props {
		if bytes.EqualFold(key, []byte(q.props[j].name)) {
			return true
		}
	}
	return false
}

func containsString(list []string, b []byte) bool {
	for _, s := range list {
		if s == string(b) {
			return true
		}
	}
	return false
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the index after the string starting at data[i] and
// whether it holds an escape.
func scanString(data []byte, i int) (int, bool) {
	escaped := false
	for i++; data[i] != '"'; i++ {
		if data[i] == '\\' {
			escaped = true
			i++
		}
	}
	return i + 1, escaped
}

// scanNumber returns the index after the number at data[i], whether it is
// written as an integer (no fraction), and whether it certainly fits a
// float64 (no exponent, under 300 characters), as the full validator's
// decoding requires.
func scanNumber(data []byte, i int) (end int, integral, fits bool) {
	integral, fits = true, true
	start := i
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c >= '0' && c <= '9' || c == '-':
		case c == '.':
			integral = false
		case c == 'e' || c == 'E' || c == '+':
			integral, fits = false, false
		default:
			return i, integral, fits && i-start < 300
		}
	}
	return i, integral, fits && i-start < 300
}

// skipValue returns the index after the value at data[i], without
// recursion: nesting as deep as json.Valid admits costs no stack. Like
// check, it is not sure of a number that may not fit a float64.
func skipValue(data []byte, i int) (int, bool) {
	depth := 0
	for {
		switch c := data[i]; {
		case c == '"':
			i, _ = scanString(data, i)
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			depth--
			i++
		case c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == 't' || c == 'n':
			i += 4
		case c == 'f':
			i += 5
		default:
			var fits bool
			if i, _, fits = scanNumber(data, i); !fits {
				return 0, false
			}
		}
		if depth == 0 {
			return i, true
		}
	}
}
