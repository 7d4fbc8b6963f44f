package config

import (
	"fmt"
	"slices"
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
	return substitute(s, func(ref string) (string, error) { return resolve(ref, lookup, environ) })
}

// substitute replaces each ${ref} in s with sub(ref), and $$ with $.
func substitute(s string, sub func(ref string) (string, error)) (string, error) {
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
		v, err := sub(ref)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// parseRef splits the text of a ${...} reference into the variable's name,
// the operator (":-", "-", ":?" or none) and its argument.
func parseRef(ref string) (name, op, arg string, err error) {
	name = ref
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
			return "", "", "", fmt.Errorf("bad reference ${%s}; write ${VAR}, ${VAR:-default}, ${VAR-default} or ${VAR:?message}", ref)
		}
	}
	if !validName(name) {
		return "", "", "", fmt.Errorf("bad variable name %q in ${%s}; names are letters, digits and _, not starting with a digit", name, ref)
	}
	return name, op, arg, nil
}

func resolve(ref string, lookup func(string) (string, bool), environ func() []string) (string, error) {
	name, op, arg, err := parseRef(ref)
	if err != nil {
		return "", err
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

// denied lists the variables s refers to that allow does not allow, in
// order, once each. Malformed references are left to expand to report.
func denied(s string, allow func(string) bool) []string {
	var names []string
	_, _ = substitute(s, func(ref string) (string, error) {
		if name, _, _, err := parseRef(ref); err == nil && !allow(name) && !slices.Contains(names, name) {
			names = append(names, name)
		}
		return "", nil
	})
	return names
}

// allowed reports whether patterns allow the variable name: a pattern is a
// name, or a prefix followed by * ("APP_*"; "*" allows every variable).
func allowed(patterns []string, name string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

// deniedMsg says why a variable may not be read where it is, and how to
// allow it.
func deniedMsg(names []string) string {
	refs := make([]string, len(names))
	for i, n := range names {
		refs[i] = "${" + n + "}"
	}
	first := names[0]
	return fmt.Sprintf("reads %s, which a config file may read only in credential fields "+
		"(model api_key, base_url and headers; mcp_servers url, headers and env; store postgres dsn and redis url; tool params tagged config:\"credential\"), since elsewhere the value can reach the model; "+
		"if this file may show it to the model, allow it: runlet --allow-env %s, or Loader.AllowEnv", list(refs), first)
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
