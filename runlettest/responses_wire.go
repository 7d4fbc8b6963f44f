package runlettest

import (
	"encoding/json"
	"fmt"
	"time"
)

// Wire shapes of the fake's responses, following the OpenAPI document
// (required fields are always written; pointers mark fields that only some
// item or event types have).

type respFakeResponse struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	CreatedAt         int64              `json:"created_at"`
	Status            string             `json:"status"`
	Error             *respFakeErrorBody `json:"error"`
	IncompleteDetails *respFakeReason    `json:"incomplete_details"`
	Instructions      *string            `json:"instructions"`
	Metadata          map[string]string  `json:"metadata"`
	Model             string             `json:"model"`
	Output            []respFakeItem     `json:"output"`
	ParallelToolCalls bool               `json:"parallel_tool_calls"`
	Temperature       float64            `json:"temperature"`
	ToolChoice        string             `json:"tool_choice"`
	Tools             []any              `json:"tools"`
	TopP              float64            `json:"top_p"`
	Usage             *respFakeUsage     `json:"usage,omitempty"` // the API sends null; the schema wants it absent
}

type respFakeErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type respFakeReason struct {
	Reason string `json:"reason"`
}

type respFakeUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type respFakeItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status,omitempty"`
	// message
	Role    string          `json:"role,omitempty"`
	Content *[]respFakePart `json:"content,omitempty"`
	// function_call
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	// reasoning
	Summary          *[]respFakePart `json:"summary,omitempty"`
	EncryptedContent *string         `json:"encrypted_content,omitempty"`
}

// respFakePart is an output_text, refusal or summary_text part.
type respFakePart struct {
	Type        string  `json:"type"`
	Text        *string `json:"text,omitempty"`
	Refusal     *string `json:"refusal,omitempty"`
	Annotations *[]any  `json:"annotations,omitempty"`
	Logprobs    *[]any  `json:"logprobs,omitempty"`
}

func respFakeTextPart(text string) respFakePart {
	return respFakePart{Type: "output_text", Text: &text, Annotations: &[]any{}, Logprobs: &[]any{}}
}

type respFakeEvent struct {
	Type           string            `json:"type"`
	SequenceNumber int               `json:"sequence_number"`
	Response       *respFakeResponse `json:"response,omitempty"`
	OutputIndex    *int              `json:"output_index,omitempty"`
	ItemID         string            `json:"item_id,omitempty"`
	ContentIndex   *int              `json:"content_index,omitempty"`
	SummaryIndex   *int              `json:"summary_index,omitempty"`
	Item           *respFakeItem     `json:"item,omitempty"`
	Part           *respFakePart     `json:"part,omitempty"`
	Delta          *string           `json:"delta,omitempty"`
	Text           *string           `json:"text,omitempty"`
	Refusal        *string           `json:"refusal,omitempty"`
	Name           string            `json:"name,omitempty"`
	Arguments      *string           `json:"arguments,omitempty"`
	Logprobs       *[]any            `json:"logprobs,omitempty"`
}

// respFakeErrorEvent is the "error" event.
type respFakeErrorEvent struct {
	Type           string  `json:"type"`
	SequenceNumber int     `json:"sequence_number"`
	Code           string  `json:"code"`
	Message        string  `json:"message"`
	Param          *string `json:"param"`
}

// respFakeBuild renders a turn as a complete response object.
func respFakeBuild(t ResponsesTurn, seq int, model string, encrypted bool, inputBytes int) *respFakeResponse {
	r := &respFakeResponse{
		ID: t.ID, Object: "response", CreatedAt: time.Now().Unix(), Status: "completed",
		Metadata: map[string]string{}, Model: t.Model, Output: make([]respFakeItem, len(t.Items)),
		ParallelToolCalls: true, Temperature: 1, ToolChoice: "auto", Tools: []any{}, TopP: 1,
	}
	if r.ID == "" {
		r.ID = fmt.Sprintf("resp_%d", seq)
	}
	if r.Model == "" {
		r.Model = model
	}
	var out, reasoning []string
	for i, it := range t.Items {
		w := respFakeItem{ID: it.ID, Type: it.Type, Status: "completed"}
		switch it.Type {
		case "message":
			if w.ID == "" {
				w.ID = fmt.Sprintf("msg_%d_%d", seq, i)
			}
			w.Role = "assistant"
			text := it.Text
			part := respFakeTextPart(text)
			if it.Refusal {
				part = respFakePart{Type: "refusal", Refusal: &text}
			}
			w.Content = &[]respFakePart{part}
			out = append(out, text)
		case "function_call":
			if w.ID == "" {
				w.ID = fmt.Sprintf("fc_%d_%d", seq, i)
			}
			w.CallID = it.CallID
			if w.CallID == "" {
				w.CallID = fmt.Sprintf("call_%d_%d", seq, i)
			}
			w.Name = it.Name
			args := it.Arguments
			w.Arguments = &args
			out = append(out, it.Name, args)
		case "reasoning":
			if w.ID == "" {
				w.ID = fmt.Sprintf("rs_%d_%d", seq, i)
			}
			w.Status = ""
			reasoning = append(reasoning, "") // an item with no summary still reasoned
			reasoning = append(reasoning, it.Summary...)
			summary := make([]respFakePart, len(it.Summary))
			for j := range it.Summary {
				summary[j] = respFakePart{Type: "summary_text", Text: &it.Summary[j]}
			}
			w.Summary = &summary
			if encrypted {
				enc := it.EncryptedContent
				w.EncryptedContent = &enc
			}
		}
		r.Output[i] = w
	}
	u := t.Usage
	if u == (ResponsesUsage{}) {
		// Reasoning counts in output_tokens and, apart, in reasoning_tokens.
		u = ResponsesUsage(EstimateUsage(inputBytes, append(out, reasoning...)...))
		if len(reasoning) > 0 {
			u.ReasoningTokens = max(1, estimateTokens(reasoning...))
		}
	}
	r.Usage = &respFakeUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	r.Usage.InputTokensDetails.CachedTokens = u.CachedTokens
	r.Usage.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	switch {
	case t.Fail != nil:
		r.Status = "failed"
		r.Error = &respFakeErrorBody{Code: t.Fail.Code, Message: t.Fail.Message}
		r.Usage = nil
	case t.Incomplete != "":
		r.Status = "incomplete"
		r.IncompleteDetails = &respFakeReason{Reason: t.Incomplete}
	}
	return r
}

// respFakeStream writes a response as the API's event stream. With fail
// set, an "error" event takes the place of the event after the first
// failAfter ones, or of the terminal event if the stream is shorter.
func respFakeStream(w *sseWriter, final *respFakeResponse, chunk int, fail *WireError, failAfter int) {
	seq := 0
	failNow := func() bool {
		data, _ := json.Marshal(&respFakeErrorEvent{Type: "error", SequenceNumber: seq, Code: fail.Code, Message: fail.Message})
		w.event("error", data)
		return false
	}
	send := func(typ string, ev any) bool {
		if fail != nil && seq >= failAfter {
			return failNow()
		}
		data, _ := json.Marshal(ev)
		seq++
		return w.event(typ, data)
	}
	event := func(ev *respFakeEvent) bool {
		ev.SequenceNumber = seq
		return send(ev.Type, ev)
	}
	start := *final
	start.Status, start.Output, start.Usage, start.Error, start.IncompleteDetails = "in_progress", []respFakeItem{}, nil, nil, nil
	if !event(&respFakeEvent{Type: "response.created", Response: &start}) ||
		!event(&respFakeEvent{Type: "response.in_progress", Response: &start}) {
		return
	}
	zero := 0
	for i := range final.Output {
		idx := i
		done := final.Output[i]
		added := done
		added.Status = "in_progress"
		switch done.Type {
		case "message":
			added.Content = &[]respFakePart{}
		case "function_call":
			empty := ""
			added.Arguments = &empty
		case "reasoning":
			added.Summary = &[]respFakePart{}
		}
		if !event(&respFakeEvent{Type: "response.output_item.added", OutputIndex: &idx, Item: &added}) {
			return
		}
		switch done.Type {
		case "message":
			p := (*done.Content)[0]
			startPart := respFakeTextPart("")
			deltaType, doneType, full := "response.output_text.delta", "response.output_text.done", p.Text
			var logprobs *[]any
			if p.Type == "refusal" {
				empty := ""
				startPart = respFakePart{Type: "refusal", Refusal: &empty}
				deltaType, doneType, full = "response.refusal.delta", "response.refusal.done", p.Refusal
			} else {
				logprobs = &[]any{}
			}
			if !event(&respFakeEvent{Type: "response.content_part.added", OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Part: &startPart}) {
				return
			}
			for _, c := range chunks(*full, chunk) {
				if !event(&respFakeEvent{Type: deltaType, OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Delta: &c, Logprobs: logprobs}) {
					return
				}
			}
			ev := &respFakeEvent{Type: doneType, OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Logprobs: logprobs}
			if p.Type == "refusal" {
				ev.Refusal = full
			} else {
				ev.Text = full
			}
			if !event(ev) || !event(&respFakeEvent{Type: "response.content_part.done", OutputIndex: &idx, ItemID: done.ID, ContentIndex: &zero, Part: &p}) {
				return
			}
		case "function_call":
			for _, c := range chunks(*done.Arguments, chunk) {
				if !event(&respFakeEvent{Type: "response.function_call_arguments.delta", OutputIndex: &idx, ItemID: done.ID, Delta: &c}) {
					return
				}
			}
			if !event(&respFakeEvent{Type: "response.function_call_arguments.done", OutputIndex: &idx, ItemID: done.ID, Name: done.Name, Arguments: done.Arguments}) {
				return
			}
		case "reasoning":
			for j, part := range *done.Summary {
				si := j
				empty := ""
				if !event(&respFakeEvent{Type: "response.reasoning_summary_part.added", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Part: &respFakePart{Type: "summary_text", Text: &empty}}) {
					return
				}
				for _, c := range chunks(*part.Text, chunk) {
					if !event(&respFakeEvent{Type: "response.reasoning_summary_text.delta", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Delta: &c}) {
						return
					}
				}
				if !event(&respFakeEvent{Type: "response.reasoning_summary_text.done", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Text: part.Text}) ||
					!event(&respFakeEvent{Type: "response.reasoning_summary_part.done", OutputIndex: &idx, ItemID: done.ID, SummaryIndex: &si, Part: &part}) {
					return
				}
			}
		}
		if !event(&respFakeEvent{Type: "response.output_item.done", OutputIndex: &idx, Item: &done}) {
			return
		}
	}
	if fail != nil {
		failNow()
		return
	}
	switch final.Status {
	case "failed":
		if !send("error", &respFakeErrorEvent{Type: "error", SequenceNumber: seq, Code: final.Error.Code, Message: final.Error.Message}) {
			return
		}
		event(&respFakeEvent{Type: "response.failed", Response: final})
	case "incomplete":
		event(&respFakeEvent{Type: "response.incomplete", Response: final})
	default:
		event(&respFakeEvent{Type: "response.completed", Response: final})
	}
}
