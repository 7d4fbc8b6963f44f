package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// printable returns s as a terminal may show it: what the model, a tool, a
// provider or an MCP server wrote is text, never a command to the
// terminal. Control characters but newline and tab — ESC, which starts the
// sequences that move the cursor, erase lines, set the window title or
// write the clipboard, BEL, DEL and the C1 controls — are shown as Go
// escapes (\x1b, \u009b); a carriage return, which would let a line
// overwrite what was printed before it, is dropped (a CRLF line ends as
// usual); bytes that are not UTF-8 show as U+FFFD (a lone 0x9b is CSI to
// an 8-bit terminal). The bidirectional embeddings, overrides and isolates
// (U+202A–U+202E, U+2066–U+2069), which make a terminal show text in
// another order than it is read ("Trojan Source": an approval prompt for
// `rm -rf ~ #` could read as something else), are shown as escapes
// (\u202e) too. A string with none of these is returned as is.
func printable(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError && !isC1(r) && !isBidi(r) {
				i += n
				continue
			}
		}
		break
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case isC1(r) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r) // U+FFFD for a byte that is not UTF-8
		}
	}
	return b.String()
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi reports the bidirectional formatting characters that reorder
// what follows them: LRE, RLE, PDF, LRO, RLO and LRI, RLI, FSI, PDI.
func isBidi(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }
