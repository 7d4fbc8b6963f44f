package runlettest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// CassetteVersion is the cassette file format version this package writes
// and reads.
const CassetteVersion = 1

// Cassette is a recorded sequence of HTTP exchanges. It marshals to a
// readable JSON file: JSON bodies are stored as JSON, text bodies (such as
// server-sent event streams) as strings.
type Cassette struct {
	Version      int           `json:"version"`
	Interactions []Interaction `json:"interactions"`
}

// Interaction is one recorded request and its response.
type Interaction struct {
	Request  RecordedRequest  `json:"request"`
	Response RecordedResponse `json:"response"`
}

// RecordedRequest is a request as sent, minus credentials (see NewRecorder).
type RecordedRequest struct {
	Method string      `json:"method"`
	URL    string      `json:"url"`
	Header http.Header `json:"header,omitempty"`
	Body
}

// RecordedResponse is a response as received.
type RecordedResponse struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
	Body
}

// Body is a recorded message body, in the most readable of three forms: a
// JSON object or array in JSON, UTF-8 text in Text, anything else in Base64.
// At most one field is set; none means an empty body.
type Body struct {
	JSON   json.RawMessage `json:"json,omitempty"`
	Text   string          `json:"text,omitempty"`
	Base64 string          `json:"base64,omitempty"`
}

// BodyFrom returns the Body form of b.
func BodyFrom(b []byte) Body {
	t := bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return Body{}
	case len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t):
		return Body{JSON: json.RawMessage(bytes.Clone(t))}
	case utf8.Valid(b):
		return Body{Text: string(b)}
	default:
		return Body{Base64: base64.StdEncoding.EncodeToString(b)}
	}
}

// Bytes returns the body's bytes. A JSON body comes back compact: the bytes
// may differ from the wire's in whitespace, never in meaning.
func (b Body) Bytes() []byte {
	switch {
	case len(b.JSON) > 0:
		var buf bytes.Buffer
		if err := json.Compact(&buf, b.JSON); err != nil {
			return bytes.Clone(b.JSON)
		}
		return buf.Bytes()
	case b.Text != "":
		return []byte(b.Text)
	case b.Base64 != "":
		d, _ := base64.StdEncoding.DecodeString(b.Base64)
		return d
	}
	return nil
}

// MaxCassetteBytes bounds the size of a file LoadCassette reads (64 MiB).
// A cassette is test data, possibly from somewhere else; for a larger one,
// read it yourself and call ParseCassette.
const MaxCassetteBytes = 64 << 20

// LoadCassette reads a cassette file written by Cassette.Save or
// Recorder.Save. A file over MaxCassetteBytes is refused before it is
// read (or, when its size is not known beforehand, once it passes the
// limit).
func LoadCassette(path string) (*Cassette, error) {
	data, err := readCassette(path)
	if err != nil {
		return nil, fmt.Errorf("runlettest: %w", err)
	}
	c, err := ParseCassette(data)
	if err != nil {
		return nil, fmt.Errorf("runlettest: %s: %w", path, err)
	}
	return c, nil
}

func readCassette(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s is larger than MaxCassetteBytes (%d bytes)", path, MaxCassetteBytes)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxCassetteBytes {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxCassetteBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxCassetteBytes {
		return nil, tooLarge
	}
	return data, nil
}

// ParseCassette decodes a cassette from its JSON form.
func ParseCassette(data []byte) (*Cassette, error) {
	var c Cassette
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("not a cassette: %w", err)
	}
	if c.Version != CassetteVersion {
		return nil, fmt.Errorf("cassette version %d, want %d", c.Version, CassetteVersion)
	}
	for i, in := range c.Interactions {
		if in.Request.Method == "" || in.Request.URL == "" || in.Response.Status == 0 {
			return nil, fmt.Errorf("interaction %d: method, url and status are required", i)
		}
		for _, b := range []Body{in.Request.Body, in.Response.Body} {
			if _, err := base64.StdEncoding.DecodeString(b.Base64); err != nil {
				return nil, fmt.Errorf("interaction %d: bad base64 body: %w", i, err)
			}
		}
	}
	return &c, nil
}

// Save writes the cassette as indented JSON, creating the directory if
// needed. Recorded traffic holds conversations: a new file is readable by
// its owner only (0600) and a new directory 0700; an existing file keeps
// its mode.
func (c *Cassette) Save(path string) error {
	out := *c
	out.Version = CassetteVersion
	if out.Interactions == nil {
		out.Interactions = []Interaction{}
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("runlettest: encoding cassette: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("runlettest: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("runlettest: %w", err)
	}
	return nil
}
