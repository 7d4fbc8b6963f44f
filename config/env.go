package config

import (
	"fmt"
	"strings"

	"github.com/runlet/runlet/internal/suggest"
)

// expand replaces ${VAR} references in s:
//
//	${VAR}          the variable's value; an error when it is not set
//	${VAR:-default} default when VAR is unset or empty
//	${VAR-default}  default when VAR is unset
//	${VAR:?message} an error with message when VAR is unset or empty
//	$$              a literal $
//
// A $ followed by anything else is kept as is. environ, if not nil, lists
// the variables that are set, to suggest one when a name looks mistyped.
func expand(s string, lookup func(string) (string, bool), environ func() []string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '{':
		default:
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q; close it with }, or write $${ for a literal ${", s)
		}
		ref := s[i+2 : i+2+end]
		i += 2 + end
		v, err := resolve(ref, lookup, environ)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

func resolve(ref string, lookup func(string) (string, bool), environ func() []string) (string, error) {
	name, op, arg := ref, "", ""
	if i := strings.IndexAny(ref, ":-"); i >= 0 {
		name = ref[:i]
		rest := ref[i:]
		for _, o := range []string{":-", ":?", "-"} {
			if strings.HasPrefix(rest, o) {
				op, arg = o, rest[len(o):]
				break
			}
		}
		if op == "" {
			return "", fmt.Errorf("bad reference ${%s}; write ${VAR}, ${VAR:-default}, ${VAR-default} or ${VAR:?message}", ref)
		}
	}
	if !validName(name) {
		return "", fmt.Errorf("bad variable name %q in ${%s}; names are letters, digits and _, not starting with a digit", name, ref)
	}
	v, ok := lookup(name)
	switch op {
	case ":-":
		if !ok || v == "" {
			return arg, nil
		}
	case "-":
		if !ok {
			return arg, nil
		}
	case ":?":
		if !ok || v == "" {
			if arg == "" {
				arg = "not set"
			}
			return "", fmt.Errorf("environment variable %s: %s", name, arg)
		}
	default:
		if !ok {
			msg := fmt.Sprintf("environment variable %s is not set", name)
			if environ != nil {
				var set []string
				for _, kv := range environ() {
					if k, _, ok := strings.Cut(kv, "="); ok && k != name {
						set = append(set, k)
					}
				}
				if best := suggest.Closest(name, set); best != "" {
					msg += fmt.Sprintf("; did you mean %s (which is set)?", best)
				}
			}
			return "", fmt.Errorf("%s; set it (export %s=...) or give a default: ${%s:-default}", msg, name, name)
		}
	}
	return v, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
