// Package toolname makes tool names every model provider accepts:
// ^[a-zA-Z0-9_-]{1,64}$, OpenAI's rule and the strictest. It is the one
// sanitiser of tool names in this module: an agent offered as a tool or a
// handoff, and an MCP server's tools, are named by it.
package toolname

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// MaxLen is the longest name Make returns.
const MaxLen = 64

// Sanitize replaces every character outside [a-zA-Z0-9_-] with '_': one
// '_' per character (rune), not per byte, so "café" becomes "caf_". Invalid
// UTF-8 bytes each count as a character.
func Sanitize(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !valid(s[i]) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && valid(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Make returns prefix (already valid) plus the sanitised name, or prefix
// plus fallback when that is empty. A result longer than MaxLen bytes is
// cut to 55 and ends in '_' and 8 hex digits of a hash of prefix and name,
// which keeps long names distinct; the hash is part of names that stored
// conversations refer to, so it never changes.
func Make(prefix, name, fallback string) string {
	n := prefix + Sanitize(name)
	if n == prefix {
		n = prefix + fallback
	}
	if len(n) <= MaxLen {
		return n
	}
	h := fnv.New32a()
	h.Write([]byte(prefix))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return fmt.Sprintf("%s_%08x", n[:MaxLen-9], h.Sum32())
}

func valid(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
