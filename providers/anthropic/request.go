package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/wirejson"
)

type wireSource struct {
	Type      string `json:"type"` // base64, url or text
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// emptySchema is sent for a tool without an input schema: the API requires one.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Option keys the adapter interprets; every other key is copied into the
// body as given.
const (
	optModel                  = "model"
	optMaxTokens              = "max_tokens"
	optThinking               = "thinking"
	optCacheControl           = "cache_control"
	optBetas                  = "betas"
	optDisableParallelToolUse = "disable_parallel_tool_use"
	optOutputConfig           = "output_config"
)

// built is a request ready to send.
type built struct {
	body  []byte
	betas string // extra anthropic-beta values for this request
	model string
	url   string
}

// buildRequest translates a runlet request into a Messages API body.
func (m *Messages) buildRequest(req *runlet.ModelRequest, stream bool) (built, error) {
	if m.cfg.err != nil {
		return built{}, m.cfg.err
	}
	if req == nil {
		return built{}, m.invalid("nil request", nil)
	}
	if err := req.Reasoning.Validate(); err != nil {
		return built{}, m.invalid("invalid settings", err)
	}
	cfg := &m.cfg
	w := request{
		model:         cfg.model,
		maxTokens:     req.MaxOutputTokens,
		temperature:   req.Temperature,
		topP:          req.TopP,
		stopSequences: req.StopSequences,
		stream:        stream,
	}
	if samplingRemoved(cfg.version) {
		w.temperature, w.topP = nil, nil
	}
	defaultMax := false
	if w.maxTokens <= 0 {
		w.maxTokens = cfg.maxTokens
	}
	if w.maxTokens <= 0 {
		w.maxTokens, defaultMax = DefaultMaxTokens, true
	}

	// Options: interpreted keys first; the rest overlay the finished body.
	var out built
	var overlay map[string]any
	thinkingSet := false
	for k, v := range req.Options {
		var err error
		switch k {
		case optModel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a model name, got %T", v)
			}
			w.model = s
		case optMaxTokens:
			n, ok := wirejson.ToInt(v)
			if !ok || n <= 0 {
				err = fmt.Errorf("want a positive integer, got %v", v)
			}
			w.maxTokens, defaultMax = n, false
		case optThinking:
			w.thinking, err = thinkingOption(v)
			thinkingSet = true
		case optCacheControl:
			w.cacheControl, err = cacheControlOption(v)
		case optBetas:
			out.betas, err = betasOption(v)
		case optDisableParallelToolUse:
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("want a bool, got %T", v)
			}
			w.disableParallel = b
		case "stream":
			err = fmt.Errorf("set by the adapter (Generate or Stream)")
		case optOutputConfig:
			oc, ok := v.(map[string]any)
			if !ok && v != nil {
				err = fmt.Errorf("want an object, got %T", v)
			}
			w.outputConfig = maps.Clone(oc)
		default:
			if overlay == nil {
				overlay = make(map[string]any, len(req.Options))
			}
			overlay[k] = v
		}
		if err != nil {
			return built{}, m.invalid(fmt.Sprintf("invalid option %q", k), err)
		}
	}
	if w.model == "" {
		return built{}, m.invalid("no model: set Config.Model or the \"model\" option", nil)
	}
	var err error
	if w.thinking, w.outputConfig, err = applyReasoning(req.Reasoning, w.model, w.thinking, thinkingSet, w.outputConfig); err != nil {
		return built{}, m.invalid("invalid settings", err)
	}
	// Extended thinking needs max_tokens above its budget; raise a default
	// max_tokens rather than fail, but never one the caller chose.
	if budget := thinkingBudget(w.thinking); defaultMax && budget >= w.maxTokens {
		w.maxTokens = budget + DefaultMaxTokens
	}
	if req.OutputSchema != nil && req.OutputSchema.Schema != nil {
		if w.outputConfig == nil {
			w.outputConfig = make(map[string]any, 1)
		}
		if _, set := w.outputConfig["format"]; !set {
			raw, err := outputSchemaJSON(req.OutputSchema.Schema)
			if err != nil {
				return built{}, m.invalid("output schema", err)
			}
			w.outputConfig["format"] = map[string]any{"type": "json_schema", "schema": raw}
		}
	}

	if hb := hostedBetas(req.HostedTools); len(hb) > 0 {
		out.betas = joinBetas([]string{out.betas}, hb)
	}
	body, err := m.encodeRequest(&w, req)
	if err != nil {
		return built{}, err
	}
	if len(overlay) > 0 {
		if body, err = wirejson.Overlay(body, overlay); err != nil {
			return built{}, m.invalid("encoding request options", err)
		}
	}
	out.body, out.model, out.url = body, w.model, cfg.url
	if cfg.vertex != "" {
		method := ":rawPredict"
		if stream {
			method = ":streamRawPredict"
		}
		out.url = httpc.JoinURL(cfg.vertex, "/models/"+url.PathEscape(w.model)+method)
	}
	return out, nil
}

func (m *Messages) invalid(msg string, err error) *runlet.ProviderError {
	return httpc.RequestError(m.cfg.name, msg, err)
}

// source builds an image or document source: inline bytes as base64 (plain
// text documents as a text source), data: URLs decoded, other URLs by
// reference. It returns nil when there is nothing to send.
func source(u, mediaType string, data []byte, document bool) *wireSource {
	if mt, d, ok := dataurl.Inline(u, mediaType, data); ok {
		mediaType, data = mt, d
	}
	if len(data) > 0 {
		if mediaType == "" {
			mediaType = http.DetectContentType(data)
		}
		mediaType = dataurl.MediaType(mediaType) // drop parameters such as charset
		if document && strings.HasPrefix(mediaType, "text/") {
			return &wireSource{Type: "text", MediaType: "text/plain", Data: string(data)}
		}
		return &wireSource{Type: "base64", MediaType: mediaType, Data: base64.StdEncoding.EncodeToString(data)}
	}
	if u != "" && !dataurl.Is(u) {
		return &wireSource{Type: "url", URL: u}
	}
	return nil
}

// toolID makes a tool call ID acceptable to the API (^[a-zA-Z0-9_-]+$),
// replacing other characters with '_', so calls made by other providers
// can be replayed. The same mapping is applied to tool_use and tool_result,
// so pairs still match.
func toolID(id string) string {
	ok := true
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			ok = false
			break
		}
	}
	if ok {
		return id
	}
	b := []byte(id)
	for i := range b {
		if !idChar(b[i]) {
			b[i] = '_'
		}
	}
	return string(b)
}

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
