package runlet

import "encoding/json"

// OutputPartial carries the answer parsed so far while it streams (Stream
// and StreamAs only): JSON is a complete JSON document holding what the
// prefix received so far determines — closed objects and arrays, the open
// string up to its last character, no half-read number or literal. Each
// OutputPartial differs from the previous one of the same attempt. A failed
// check starts a new Attempt from nothing.
type OutputPartial struct {
	EventHeader
	Mode    OutputMode      `json:"mode"`
	Attempt int             `json:"attempt"` // 1 for the first answer, 2 for the first retry, ...
	JSON    json.RawMessage `json:"json"`
}

// OutputChecked reports the check of a final answer against the output
// schema, in the mode the run uses. When Valid is false, Errors say why and
// the run either asks the model again (Retrying) or fails with an
// *OutputError.
type OutputChecked struct {
	EventHeader
	Mode     OutputMode `json:"mode"`
	Attempt  int        `json:"attempt"`
	Valid    bool       `json:"valid"`
	Errors   []string   `json:"errors,omitempty"`
	Retrying bool       `json:"retrying,omitempty"`
}

func (*OutputPartial) eventType() string { return "output.partial" }
func (*OutputChecked) eventType() string { return "output.checked" }
