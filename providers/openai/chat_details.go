package openai

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// reasoning_details is the structured reasoning of OpenRouter and other
// OpenAI-compatible servers: an array of entries such as
// {"type":"reasoning.text","text":...,"signature":...},
// {"type":"reasoning.encrypted","data":...} and
// {"type":"reasoning.summary","summary":...}, each with optional id, format
// and index. The array goes back unchanged on the assistant message of the
// next request, to the same provider only.

// chatDetail is the readable part of one entry.
type chatDetail struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Summary string `json:"summary"`
}

// readable returns the entry's text (reasoning.text) or summary
// (reasoning.summary); "" for other types.
func (e *chatDetail) readable() string {
	switch e.Type {
	case "reasoning.text":
		return e.Text
	case "reasoning.summary":
		return e.Summary
	}
	return ""
}

// chatDetailsArray returns raw when it is a JSON array (the field is
// absent, null or something else otherwise).
func chatDetailsArray(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var entries []json.RawMessage
	if json.Unmarshal(raw, &entries) != nil {
		return nil
	}
	return entries
}

// chatDetailsText returns the readable text of a complete array.
func chatDetailsText(entries []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range entries {
		var e chatDetail
		if json.Unmarshal(raw, &e) == nil {
			b.WriteString(e.readable())
		}
	}
	return b.String()
}

// chatDetailsMerger assembles streamed reasoning_details. Fragments of one
// entry share its index (and type): their text, summary and data strings
// are concatenated, and other fields (signature, id, format) take the last
// value sent that is not null or "". A fragment without an index is an entry of its own.
//
// Both stay linear in what the stream sends: an entry is found among those
// of its index only, and a string grows in a builder (it was decoded,
// joined and encoded again for every fragment, so 13,000 one-line
// fragments took 15 s and 4 GiB).
type chatDetailsMerger struct {
	entries []*chatDetailEntry
	byIndex map[string][]*chatDetailEntry // the entries of each index, in order
}

type chatDetailEntry struct {
	index  json.RawMessage // nil when the fragment had none
	typ    string
	fields map[string]json.RawMessage
	// texts holds the text, summary and data strings of two fragments or
	// more, joined; their fields are nil until json.
	texts map[string]*strings.Builder
}

// add merges the fragments of one delta and returns their readable text.
// Entries that are not objects are ignored.
func (m *chatDetailsMerger) add(raw json.RawMessage) string {
	var b strings.Builder
	for _, frag := range chatDetailsArray(raw) {
		var fields map[string]json.RawMessage
		if json.Unmarshal(frag, &fields) != nil || fields == nil {
			continue
		}
		var e chatDetail
		_ = json.Unmarshal(frag, &e) // a field of another JSON type reads as ""
		b.WriteString(e.readable())
		m.entry(fields, e.Type).merge(fields)
	}
	return b.String()
}

// entry finds the entry a fragment continues, or starts one.
func (m *chatDetailsMerger) entry(fields map[string]json.RawMessage, typ string) *chatDetailEntry {
	idx := fields["index"]
	if len(idx) > 0 && string(idx) != "null" {
		for _, e := range m.byIndex[string(idx)] {
			if typ == "" || e.typ == "" || e.typ == typ {
				return e
			}
		}
	} else {
		idx = nil
	}
	e := &chatDetailEntry{index: idx, typ: typ, fields: map[string]json.RawMessage{}}
	m.entries = append(m.entries, e)
	if idx != nil {
		if m.byIndex == nil {
			m.byIndex = map[string][]*chatDetailEntry{}
		}
		m.byIndex[string(idx)] = append(m.byIndex[string(idx)], e)
	}
	return e
}

func (e *chatDetailEntry) merge(fields map[string]json.RawMessage) {
	if t := fields["type"]; e.typ == "" && len(t) > 0 {
		_ = json.Unmarshal(t, &e.typ)
	}
	for k, v := range fields {
		old, seen := e.fields[k]
		switch {
		case seen && (k == "text" || k == "summary" || k == "data"):
			var b string
			if json.Unmarshal(v, &b) != nil {
				delete(e.texts, k) // not a string: it replaces the text
				break
			}
			if t := e.texts[k]; t != nil {
				t.WriteString(b)
				continue
			}
			var a string
			if json.Unmarshal(old, &a) == nil {
				if e.texts == nil {
					e.texts = map[string]*strings.Builder{}
				}
				t := new(strings.Builder)
				t.WriteString(a)
				t.WriteString(b)
				e.texts[k], e.fields[k] = t, nil
				continue
			}
		case seen && (string(v) == "null" || string(v) == `""`):
			v = old // an empty fragment keeps what came before
		}
		e.fields[k] = v
	}
}

// json returns the merged array, "" when nothing was received.
func (m *chatDetailsMerger) json() string {
	if len(m.entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range m.entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, k := range chatDetailKeys(e.fields) {
			if j > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(k)
			b.Write(key)
			b.WriteByte(':')
			if t := e.texts[k]; t != nil {
				v, _ := json.Marshal(t.String())
				b.Write(v)
				continue
			}
			b.Write(e.fields[k])
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// chatDetailKeys returns the entry's keys with "type" first (as servers
// send it) and the rest sorted, so the same fragments always give the same
// bytes.
func chatDetailKeys(fields map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if _, ok := fields["type"]; ok {
		keys = slices.Insert(keys, 0, "type")
	}
	return keys
}
