package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// reference parses an event stream the slow, obvious way, following the
// WHATWG rules as this package applies them (an event with a data field is
// dispatched even if its data is empty, and a final event without its
// blank line is dispatched at EOF).
func reference(in string) []ev {
	var lines []string
	for len(in) > 0 {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 {
			lines = append(lines, in)
			break
		}
		lines = append(lines, in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var out []ev
	var data []string
	typ, id, has := "", "", false
	for _, line := range lines {
		if line == "" {
			if has {
				out = append(out, ev{typ, strings.Join(data, "\n"), id})
			}
			data, typ, has = nil, "", false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(line, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "data":
			data = append(data, value)
			has = true
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	if has {
		out = append(out, ev{typ, strings.Join(data, "\n"), id})
	}
	return out
}

// FuzzReader checks the reader against the reference parser, reading the
// input whole and in small pieces.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: hello\n\n",
		"event: x\r\ndata: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		": comment\n\nid: 1\ndata\n\n",
		"data: a\n\ndata: b",
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
		"event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n",
		"data:x\r\r\n\n\r",
		"id: a\x00b\ndata: 1\n\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		want := reference(string(in))
		for _, r := range []io.Reader{
			bytes.NewReader(in),
			&chunked{s: string(in), n: int(chunk%7) + 1},
			iotest.HalfReader(bytes.NewReader(in)),
		} {
			got, err := readAll(r)
			if err != nil {
				t.Fatalf("error %v on %q", err, in)
			}
			if !equal(got, want) {
				t.Fatalf("input %q:\n got %q\nwant %q", in, got, want)
			}
		}
	})
}
