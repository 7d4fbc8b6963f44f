package bedrock

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/httpc"
)

// Model is a runlet.Model backed by Amazon Bedrock's Converse and
// ConverseStream operations. It is safe for concurrent use.
type Model struct {
	cfg resolved
}

var (
	_ runlet.Model       = (*Model)(nil)
	_ runlet.OutputModer = (*Model)(nil)
)

// Name returns the adapter's name (Config.Name, default "bedrock").
func (m *Model) Name() string { return m.cfg.name }

// Region returns the AWS Region the adapter signs for.
func (m *Model) Region() string { return m.cfg.region }

// OutputMode is runlet.OutputTool: every Bedrock model family that takes
// tools can answer through one, while Converse's native structured output
// (outputConfig.textFormat, sent when a request carries an OutputSchema)
// is for some models only.
func (m *Model) OutputMode(*runlet.OutputSchema) runlet.OutputMode { return runlet.OutputTool }

// Generate calls Converse and returns the whole response. A body that
// fails to read or decode in a way a retry may cure (cut halfway) is
// retried like a failed request.
func (m *Model) Generate(ctx context.Context, req *runlet.ModelRequest) (*runlet.ModelResponse, error) {
	b, err := m.buildRequest(req, false)
	if err != nil {
		return nil, err
	}
	out, err := m.cfg.client.Generate(ctx, httpc.Call{URL: b.url, Body: b.body, Model: b.model}, func(resp *http.Response) (*runlet.ModelResponse, error) {
		if isEventStream(resp.Header) {
			return httpc.Assemble(func(emit func(runlet.StreamEvent) bool) error { return m.readStream(ctx, resp, b.model, emit) })
		}
		return m.readResponse(ctx, resp, b.model)
	})
	return out, m.cfg.signer.redact(err)
}

// Stream calls ConverseStream and yields text, reasoning and tool-call
// deltas as they arrive, then one runlet.StreamDone event with the
// assembled response. A stream that fails before its first delta is
// retried like a failed request; after that the error is yielded.
func (m *Model) Stream(ctx context.Context, req *runlet.ModelRequest) iter.Seq2[runlet.StreamEvent, error] {
	b, err := m.buildRequest(req, true)
	if err != nil {
		return httpc.Failed(err)
	}
	return func(yield func(runlet.StreamEvent, error) bool) {
		redacted := func(ev runlet.StreamEvent, err error) bool { return yield(ev, m.cfg.signer.redact(err)) }
		m.cfg.client.Stream(ctx, httpc.Call{URL: b.url, Body: b.body, Model: b.model}, redacted, func(resp *http.Response, emit func(runlet.StreamEvent) bool) error {
			if !isEventStream(resp.Header) {
				out, err := m.readResponse(ctx, resp, b.model)
				if err != nil {
					return err
				}
				httpc.EmitResponse(out, emit)
				return nil
			}
			return m.readStream(ctx, resp, b.model, emit)
		})
	}
}

// readResponse decodes a Converse response.
func (m *Model) readResponse(ctx context.Context, resp *http.Response, model string) (*runlet.ModelResponse, error) {
	client := m.cfg.client
	body, err := client.ReadAll(resp, 2*m.cfg.limit)
	if err != nil {
		return nil, err
	}
	// output.message.content[] blocks are 4 containers deep.
	if err := client.CheckBody(resp, body, 4, m.cfg.limit); err != nil {
		return nil, err
	}
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, client.DecodeError(resp, body, err)
	}
	out := m.toResponse(&w)
	size := httpc.NewBudget(m.cfg.name, m.cfg.limit)
	if err := size.Add(partsSize(out.Message)); err != nil {
		return nil, err
	}
	if err := size.AddParts(len(out.Message.Parts)); err != nil {
		return nil, err
	}
	if f := m.cfg.onResponse; f != nil {
		f(ctx, ResponseInfo{Model: model, StopReason: w.StopReason, Trace: w.Trace, AdditionalModelResponseFields: w.AdditionalModelResponseFields,
			Metrics: w.Metrics, PerformanceConfig: w.PerformanceConfig, ServiceTier: w.ServiceTier, RequestID: resp.Header.Get("X-Amzn-Requestid")})
	}
	return out, nil
}

func isEventStream(h http.Header) bool {
	return strings.HasPrefix(strings.TrimSpace(h.Get("Content-Type")), "application/vnd.amazon.eventstream")
}
