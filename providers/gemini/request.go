package gemini

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
	"github.com/runlet/runlet/internal/httpc"
	"github.com/runlet/runlet/internal/schemajson"
	"github.com/runlet/runlet/internal/wirejson"
)

// Wire types of the request body (GenerateContentRequest). Only what the
// adapter writes is modelled; everything else reaches the body through
// ModelRequest.Options.
type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
}

// wirePart is one Part, in requests and responses; the fields set depend
// on its kind.
type wirePart struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *wireBlob         `json:"inlineData,omitempty"`
	FileData         *wireFileData     `json:"fileData,omitempty"`
	FunctionCall     *wireFunctionCall `json:"functionCall,omitempty"`
	FunctionResponse *wireFuncResponse `json:"functionResponse,omitempty"`
	// Code execution (responses only): the part is also kept whole, in Raw,
	// to go back unchanged (see hosted.go).
	ExecutableCode      json.RawMessage `json:"executableCode,omitempty"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult,omitempty"`
	Raw                 json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the part and keeps a code execution part whole.
func (p *wirePart) UnmarshalJSON(data []byte) error {
	type plain wirePart
	p.Raw = nil
	err := json.Unmarshal(data, (*plain)(p))
	if p.ExecutableCode != nil || p.CodeExecutionResult != nil {
		p.Raw = append(json.RawMessage(nil), data...)
	}
	return err
}

type wireBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"` // base64
}

type wireFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type wireFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type wireFuncResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type wireGenerationConfig struct {
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     map[string]any  `json:"thinkingConfig,omitempty"`
}

// Option keys the adapter interprets; every other key is set on the body
// as given (safetySettings, cachedContent, labels, ...).
const (
	optModel            = "model"
	optThinkingBudget   = "thinking_budget"
	optThinkingLevel    = "thinking_level"
	optIncludeThoughts  = "include_thoughts"
	optGenerationConfig = "generationConfig"
)

// skipSignature is the placeholder the Gemini API documents for a function
// call whose thought signature is unknown (history from another model or
// provider); Gemini 3 models reject such a call without one.
const skipSignature = "skip_thought_signature_validator"

// buildRequest translates a runlet request into a GenerateContentRequest
// body and the URL to post it to.
func (m *Model) buildRequest(req *runlet.ModelRequest, stream bool) (url string, body []byte, err error) {
	if m.cfg.err != nil {
		return "", nil, m.cfg.err
	}
	if req == nil {
		return "", nil, m.invalid("nil request", nil)
	}
	if err := req.Reasoning.Validate(); err != nil {
		return "", nil, m.invalid("invalid settings", err)
	}
	model := m.cfg.model
	gen := wireGenerationConfig{
		Temperature:     req.Temperature,
		TopP:            req.TopP,
		MaxOutputTokens: req.MaxOutputTokens,
		StopSequences:   req.StopSequences,
	}
	var overlay, genOverlay map[string]any
	for k, v := range req.Options {
		var err error
		switch k {
		case optModel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a model name, got %T", v)
			}
			model = s
		case optThinkingBudget:
			n, ok := wirejson.ToInt(v)
			if !ok {
				err = fmt.Errorf("want an integer, got %v", v)
			}
			thinking(&gen)["thinkingBudget"] = n
		case optThinkingLevel:
			s, ok := v.(string)
			if !ok || s == "" {
				err = fmt.Errorf("want a level such as \"low\" or \"high\", got %v", v)
			}
			thinking(&gen)["thinkingLevel"] = s
		case optIncludeThoughts:
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("want a bool, got %T", v)
			}
			thinking(&gen)["includeThoughts"] = b
		case optGenerationConfig:
			g, ok := v.(map[string]any)
			if !ok {
				err = fmt.Errorf("want an object, got %T", v)
			}
			genOverlay = g
		case "alt", "stream":
			err = fmt.Errorf("set by the adapter (Generate or Stream)")
		default:
			if overlay == nil {
				overlay = make(map[string]any, len(req.Options))
			}
			overlay[k] = v
		}
		if err != nil {
			return "", nil, m.invalid(fmt.Sprintf("invalid option %q", k), err)
		}
	}
	if model == "" {
		return "", nil, m.invalid("no model: set Config.Model or the \"model\" option", nil)
	}
	applyReasoning(&gen, req.Reasoning)
	if s := req.OutputSchema; s != nil && s.Schema != nil {
		raw, err := schemajson.Marshal(s.Schema)
		if err != nil {
			return "", nil, m.invalid("output schema", err)
		}
		gen.ResponseMimeType, gen.ResponseJSONSchema = "application/json", raw
	}

	if body, err = m.encodeRequest(req, model, &gen, genOverlay); err != nil {
		return "", nil, err
	}
	if len(overlay) > 0 {
		if body, err = wirejson.Overlay(body, overlay); err != nil {
			return "", nil, m.invalid("encoding request options", err)
		}
	}
	return m.cfg.endpoint(model, stream), body, nil
}

// applyReasoning lays Settings.Reasoning under the thinking options: a
// budget is thinkingBudget, else an effort is thinkingLevel (the API
// refuses both in one request), and Summary is includeThoughts. A
// thinking_budget or thinking_level option keeps both neutral values out;
// an include_thoughts option wins over Summary.
func applyReasoning(g *wireGenerationConfig, r runlet.Reasoning) {
	_, budget := g.ThinkingConfig["thinkingBudget"]
	_, level := g.ThinkingConfig["thinkingLevel"]
	if !budget && !level {
		switch {
		case r.BudgetTokens > 0:
			thinking(g)["thinkingBudget"] = r.BudgetTokens
		case r.Effort != "":
			thinking(g)["thinkingLevel"] = string(r.Effort)
		}
	}
	if _, set := g.ThinkingConfig["includeThoughts"]; r.Summary && !set {
		thinking(g)["includeThoughts"] = true
	}
}

func thinking(g *wireGenerationConfig) map[string]any {
	if g.ThinkingConfig == nil {
		g.ThinkingConfig = make(map[string]any, 2)
	}
	return g.ThinkingConfig
}

func (m *Model) invalid(msg string, err error) *runlet.ProviderError {
	return httpc.RequestError(m.cfg.name, msg, err)
}

// needsSkipSignature reports whether a model validates thought signatures
// on function calls (Gemini 3 and later; 1.x and 2.x do not).
func needsSkipSignature(model string) bool {
	model = strings.TrimPrefix(model, "models/")
	return !strings.HasPrefix(model, "gemini-1") && !strings.HasPrefix(model, "gemini-2")
}

// media builds an inlineData part from bytes or a data: URL, or a fileData
// part from any other URL (a Files API URI, gs:// on Vertex AI, an https
// or YouTube URL).
func media(u, mediaType string, data []byte) (wirePart, error) {
	if len(data) == 0 && strings.HasPrefix(u, "data:") {
		mt, d, ok := dataurl.Parse(u)
		if !ok {
			return wirePart{}, errors.New("malformed data: URL")
		}
		data = d
		if mediaType == "" {
			mediaType = mt
		}
	}
	if len(data) > 0 {
		if mediaType == "" {
			mediaType = http.DetectContentType(data)
		}
		mediaType, _, _ = strings.Cut(mediaType, ";") // drop parameters such as charset
		return wirePart{InlineData: &wireBlob{MimeType: strings.TrimSpace(mediaType), Data: base64.StdEncoding.EncodeToString(data)}}, nil
	}
	if u == "" {
		return wirePart{}, errors.New("no data and no URL")
	}
	return wirePart{FileData: &wireFileData{MimeType: mediaType, FileURI: u}}, nil
}
