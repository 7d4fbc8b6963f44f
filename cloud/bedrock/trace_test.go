package bedrock_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/cloud/bedrock"
	"github.com/runlet/runlet/cloud/bedrock/bedrocktest"
	"github.com/runlet/runlet/runlettest"
)

// A streamed guardrail trace (in the metadata event), the additional
// response fields (in messageStop) and the raw stop reason reach
// Config.OnResponse unchanged, before StreamDone.
func TestStreamedTracePassedThrough(t *testing.T) {
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	write := func(typ, payload string) {
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue(typ))
		h.Set(":message-type", eventstream.StringValue("event"))
		_ = enc.Encode(&b, eventstream.Message{Headers: h, Payload: []byte(payload)})
	}
	write("messageStart", `{"role":"assistant"}`)
	write("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"blocked"}}`)
	write("messageStop", `{"stopReason":"guardrail_intervened","additionalModelResponseFields":{"stop_sequence":null}}`)
	write("metadata", `{"usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4},"metrics":{"latencyMs":7},"trace":{"guardrail":{"actionReason":"Guardrail blocked."}}}`)
	srv := bedrocktest.NewServer(runlettest.WireReply{Body: b.Bytes()})
	defer srv.Close()
	var info bedrock.ResponseInfo
	done := false
	m := newModel(t, srv, bedrock.Config{OnResponse: func(_ context.Context, i bedrock.ResponseInfo) {
		if done {
			t.Error("OnResponse after StreamDone")
		}
		info = i
	}})
	var resp *runlet.ModelResponse
	for ev, err := range m.Stream(ctx(t), hello()) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == runlet.StreamDone {
			done, resp = true, ev.Response
		}
	}
	if string(info.Trace) != `{"guardrail":{"actionReason":"Guardrail blocked."}}` || string(info.AdditionalModelResponseFields) != `{"stop_sequence":null}` ||
		info.StopReason != "guardrail_intervened" || string(info.Metrics) != `{"latencyMs":7}` || info.Model != testModel {
		t.Errorf("info %+v", info)
	}
	if resp.FinishReason != runlet.FinishContentFilter || resp.Usage.TotalTokens != 4 {
		t.Errorf("finish %s usage %+v", resp.FinishReason, resp.Usage)
	}
}
