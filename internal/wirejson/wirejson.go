// Package wirejson holds the JSON helpers the provider adapters share for
// request bodies: encoding without HTML escaping, and overlaying request
// options onto an encoded body.
package wirejson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Marshal encodes v like json.Marshal but without HTML escaping, so text
// (and a thinking block, whose signature covers its exact text) goes out as
// written.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Overlay sets the overlay's keys on an encoded JSON object: a key present
// in both replaces the body's value, and a nil value removes the key. This
// is how unknown request options pass through into a provider's body.
func Overlay(body []byte, overlay map[string]any) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, err
	}
	for k, v := range overlay {
		if v == nil {
			delete(obj, k)
			continue
		}
		raw, err := Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("option %q: %w", k, err)
		}
		obj[k] = raw
	}
	return Marshal(obj)
}

// ToInt converts the numeric types request options arrive as (Go literals,
// JSON, YAML) to an int; ok is false for anything else and for a number
// that is not a whole int.
func ToInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int8:
		return int(n), true
	case int16:
		return int(n), true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case uint:
		return int(n), true
	case uint8:
		return int(n), true
	case uint16:
		return int(n), true
	case uint32:
		return int(n), true
	case uint64:
		if n > math.MaxInt {
			return 0, false
		}
		return int(n), true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int(n), true
	case float32:
		return ToInt(float64(n))
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

// Object returns a tool call's arguments when they are a JSON object, else
// {}: the APIs want an object, and a model's broken arguments (say, cut off
// by a token limit) must not make the next request fail.
func Object(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// Compact returns JSON received from a provider in compact form, "{}" when
// absent or null, and invalid JSON unchanged (copied).
func Compact(in json.RawMessage) json.RawMessage {
	if len(in) == 0 || string(in) == "null" {
		return json.RawMessage("{}")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, in) != nil {
		return append(json.RawMessage(nil), in...)
	}
	return buf.Bytes()
}
