package config

import (
	"fmt"
	"slices"
	"strings"
)

// Error is a problem in a config file: where it is and how to fix it.
// Load and Loader.Decode return every problem they find, joined with
// errors.Join; errors.As finds the first *Error.
type Error struct {
	File string // the file name, as given to Load or Decode
	// Line and Column locate the value (1-based); zero when the problem has
	// no single place, such as a missing section.
	Line, Column int
	// Field is the value's dotted path, such as "model.provider" or
	// "tools.1".
	Field string
	// Msg says what is wrong and, when it can, how to fix it.
	Msg string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File == "" {
		e2 := *e
		e2.File = "config"
		if e.Line == 0 {
			return strings.TrimPrefix(e2.Error(), "config: ")
		}
		return e2.Error()
	}
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// list formats names for a message: "a, b and c".
func list(names []string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
