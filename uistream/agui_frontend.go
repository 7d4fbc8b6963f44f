package uistream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/runlet/runlet"
)

// AG-UI's frontend tools: tools the page declares in RunAgentInput.tools
// and runs itself. The model may call them as any other; the run then
// stops with the call pending (a Runlet interruption, its checkpoint in
// the store), the page runs the tool and sends its result as a tool
// message in the next request, which goes on with the run
// (Runtime.ResumeStream) with that result.

// pageTool is a frontend tool: it needs a "decision" (the page's result)
// before it runs, and running it returns the result the page sent.
type pageTool struct {
	spec runlet.ToolSpec
	// results holds the page's results by the call's arguments (compact
	// JSON): Call is not told the call's ID.
	results map[string]string
}

func (t *pageTool) Spec() runlet.ToolSpec { return t.spec }

func (t *pageTool) Policy() runlet.ToolPolicy { return runlet.ToolPolicy{RequiresApproval: true} }

func (t *pageTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	if r, ok := t.results[compactJSON(args)]; ok {
		return r, nil
	}
	return "", errors.New("the page sent no result for this call")
}

func compactJSON(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// aguiPageTools makes the page's tools. A tool's parameters must be an
// object schema (none means any object).
func aguiPageTools(in []AGUITool) (map[string]*pageTool, []runlet.Tool, error) {
	byName := make(map[string]*pageTool, len(in))
	tools := make([]runlet.Tool, 0, len(in))
	for i, t := range in {
		if !toolNameRE.MatchString(t.Name) {
			return nil, nil, fmt.Errorf("tool %d: the name must be 1 to 64 ASCII letters, digits, '_' or '-'", i)
		}
		if byName[t.Name] != nil {
			return nil, nil, fmt.Errorf("tool %d: %s is declared twice", i, t.Name)
		}
		schema := &jsonschema.Schema{Type: "object"}
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			schema = new(jsonschema.Schema)
			if err := json.Unmarshal(t.Parameters, schema); err != nil {
				return nil, nil, fmt.Errorf("tool %s: parameters are not a JSON Schema: %v", t.Name, err)
			}
			if schema.Type != "object" {
				return nil, nil, fmt.Errorf("tool %s: parameters must be an object schema", t.Name)
			}
		}
		pt := &pageTool{spec: runlet.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: schema}, results: map[string]string{}}
		byName[t.Name] = pt
		tools = append(tools, pt)
	}
	return byName, tools, nil
}

// aguiPageCallMeta is the metadata of the TOOL_CALL_START of a call of a
// page's tool: the Runlet run that waits for its result. The client keeps
// it on the call and sends it back with the assistant message.
type aguiPageCallMeta struct {
	Runlet struct {
		RunID string `json:"runId"`
	} `json:"runlet"`
}

// aguiPageResults reads a request whose last messages are the page's
// results of its tools' calls into the resume of the run that waits for
// them: the run named by those calls' metadata, one approval per result,
// each result kept by its tool for the call. ok is false when the request
// is no such answer.
func aguiPageResults(msgs []AGUIMessage, tools map[string]*pageTool) (run string, decisions []runlet.Decision, ok bool, err error) {
	n := len(msgs)
	for n > 0 && msgs[n-1].Role == "tool" {
		n--
	}
	if n == len(msgs) || n == 0 || msgs[n-1].Role != "assistant" {
		return "", nil, false, nil
	}
	calls := make(map[string]AGUIToolCall)
	for _, c := range msgs[n-1].ToolCalls {
		var meta aguiPageCallMeta
		if len(c.Metadata) > 0 && json.Unmarshal(c.Metadata, &meta) == nil && meta.Runlet.RunID != "" {
			if run != "" && meta.Runlet.RunID != run {
				return "", nil, false, errors.New("the tool results answer calls of different runs")
			}
			run = meta.Runlet.RunID
			calls[c.ID] = c
		}
	}
	if run == "" {
		return "", nil, false, nil
	}
	for _, m := range msgs[n:] {
		c, found := calls[m.ToolCallID]
		if !found {
			continue
		}
		pt := tools[c.Function.Name]
		if pt == nil {
			return "", nil, false, fmt.Errorf("a result of %s, which the request's tools do not declare", sanitizeLine(c.Function.Name))
		}
		res, err := aguiToolMessage(m.Content)
		if err != nil {
			return "", nil, false, fmt.Errorf("the result of %s: %w", sanitizeLine(c.ID), err)
		}
		text := res.Content
		if m.Error != "" {
			text = "Error: " + m.Error
		}
		pt.results[compactJSON([]byte(c.Function.Arguments))] = text
		decisions = append(decisions, runlet.Approve(c.ID))
	}
	if len(decisions) == 0 {
		return "", nil, false, nil
	}
	return run, decisions, true, nil
}
