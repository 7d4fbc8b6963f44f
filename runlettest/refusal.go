package runlettest

// AnthropicStopDetails is the stop_details of a response that stopped with
// stop_reason "refusal": why Anthropic's classifiers declined, such as
// Category "cyber" and an Explanation. The API sends it on the message and,
// streaming, on the message_delta event beside stop_reason.
type AnthropicStopDetails struct {
	Category, Explanation string
}

type stopDetailsJSON struct {
	Type        string  `json:"type"`
	Category    *string `json:"category"`
	Explanation string  `json:"explanation,omitempty"`
}

// json renders d, or nil for none.
func (d *AnthropicStopDetails) json() *stopDetailsJSON {
	if d == nil {
		return nil
	}
	j := &stopDetailsJSON{Type: "refusal", Explanation: d.Explanation}
	if d.Category != "" {
		j.Category = &d.Category
	}
	return j
}
