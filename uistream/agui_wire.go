package uistream

import (
	"encoding/json"

	"github.com/runlet/runlet"
)

// AGUIProtocolVersion is the AG-UI protocol version AGUI speaks: the
// schema of @ag-ui/core 1.0.0 (https://ag-ui.com/spec/1.0/schema.json),
// the version its Node tests pin.
const AGUIProtocolVersion = "1.0"

// RunAgentInput is the body an AG-UI client posts to run an agent
// (@ag-ui/core's RunAgentInput). Only the fields AGUI reads are typed;
// ForwardedProps is the application's, handed to AGUIOptions.Prepare.
type RunAgentInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	State           json.RawMessage `json:"state,omitempty"`
	Messages        []AGUIMessage   `json:"messages"`
	Tools           []AGUITool      `json:"tools,omitempty"`
	Context         []AGUIContext   `json:"context,omitempty"`
	ForwardedProps  json.RawMessage `json:"forwardedProps,omitempty"`
	Resume          []AGUIResume    `json:"resume,omitempty"`
}

// AGUIMessage is one message of RunAgentInput.Messages. Content is a
// string, or for user and tool messages an array of content parts.
type AGUIMessage struct {
	ID            string          `json:"id"`
	Role          string          `json:"role"`
	Content       json.RawMessage `json:"content,omitempty"`
	Name          string          `json:"name,omitempty"`
	ToolCalls     []AGUIToolCall  `json:"toolCalls,omitempty"`
	ToolCallID    string          `json:"toolCallId,omitempty"`
	Error         string          `json:"error,omitempty"`
	SubagentRunID string          `json:"subagentRunId,omitempty"`
}

// AGUIToolCall is a call an assistant message made. Metadata is what the
// call's TOOL_CALL_START carried, which the client keeps.
type AGUIToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"` // "function"
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// AGUITool is a tool the client offers (a frontend tool).
type AGUITool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// AGUIContext is a named piece of ambient information for the run.
type AGUIContext struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// AGUIResume answers one interrupt of the run this one continues.
type AGUIResume struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"` // "resolved" or "cancelled"
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// aguiPart is a content part of a user or tool message.
type aguiPart struct {
	Type   string      `json:"type"` // text, image, audio, video, document
	Text   string      `json:"text,omitempty"`
	Source *aguiSource `json:"source,omitempty"`
}

// aguiSource is where a media part's bytes are: inline base64 ("data"),
// a URL, or a provider's file handle ("file").
type aguiSource struct {
	Type     string `json:"type"`
	Value    string `json:"value"`
	MimeType string `json:"mimeType,omitempty"`
}

// The events AGUI writes, one struct per event type so that no two fields
// share a JSON name. Every event has a type and a timestamp (Unix
// milliseconds); SubagentRunID attributes it to an agent called as a tool.

type aguiBase struct {
	Type      string `json:"type"`
	Timestamp int64  `json:"timestamp,omitempty"`
}

type aguiRunStarted struct {
	aguiBase
	ThreadID        string `json:"threadId"`
	RunID           string `json:"runId"`
	ParentRunID     string `json:"parentRunId,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

type aguiRunFinished struct {
	aguiBase
	ThreadID string          `json:"threadId"`
	RunID    string          `json:"runId"`
	Result   json.RawMessage `json:"result,omitempty"`
	Outcome  *aguiOutcome    `json:"outcome,omitempty"`
	Usage    []aguiUsage     `json:"usage,omitempty"`
	Metadata *aguiRunMeta    `json:"metadata,omitempty"`
}

// aguiRunMeta is what RUN_FINISHED and RUN_ERROR say of the run under the
// "runlet" metadata key: Runlet's run ID (for the server's logs), what it
// used and cost (runlet.Usage's and runlet.Cost's JSON) and its turns.
type aguiRunMeta struct {
	Runlet struct {
		RunID string       `json:"runId"`
		Usage runlet.Usage `json:"usage"`
		Cost  runlet.Cost  `json:"cost"`
		Turns int          `json:"turns"`
	} `json:"runlet"`
}

func aguiRunMetaOf(res *runlet.Result) *aguiRunMeta {
	if res == nil {
		return nil
	}
	m := &aguiRunMeta{}
	m.Runlet.RunID, m.Runlet.Usage, m.Runlet.Cost, m.Runlet.Turns = res.RunID, res.Usage, res.Cost, res.Turns
	return m
}

type aguiOutcome struct {
	Type               string          `json:"type"` // success, interrupt
	Interrupts         []aguiInterrupt `json:"interrupts,omitempty"`
	PendingToolCallIDs []string        `json:"pendingToolCallIds,omitempty"`
}

// aguiInterrupt asks the client for a decision on one call.
type aguiInterrupt struct {
	SubagentRunID  string          `json:"subagentRunId,omitempty"`
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message,omitempty"`
	ToolCallID     string          `json:"toolCallId,omitempty"`
	ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
	Metadata       *aguiCallMeta   `json:"metadata,omitempty"`
}

// aguiCallMeta is what an interrupt says of its call, under the "runlet"
// metadata key: the tool and the arguments the model proposed.
type aguiCallMeta struct {
	Runlet struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"runlet"`
}

type aguiUsage struct {
	Model             string `json:"model,omitempty"`
	InputTokens       int    `json:"inputTokens"`
	OutputTokens      int    `json:"outputTokens"`
	TotalTokens       int    `json:"totalTokens"`
	ReasoningTokens   int    `json:"reasoningTokens,omitempty"`
	CachedInputTokens int    `json:"cachedInputTokens,omitempty"`
	CacheWriteTokens  int    `json:"cacheWriteInputTokens,omitempty"`
}

type aguiRunError struct {
	aguiBase
	Message  string       `json:"message"`
	Code     string       `json:"code,omitempty"`
	Metadata *aguiRunMeta `json:"metadata,omitempty"`
}

type aguiStep struct {
	aguiBase
	SubagentRunID string `json:"subagentRunId,omitempty"`
	StepName      string `json:"stepName"`
}

// aguiMessageEvent is TEXT_MESSAGE_START/CONTENT/END and the REASONING_
// events: a message ID, and a role or a delta where the type has one.
type aguiMessageEvent struct {
	aguiBase
	SubagentRunID string  `json:"subagentRunId,omitempty"`
	MessageID     string  `json:"messageId"`
	Role          string  `json:"role,omitempty"`
	Name          string  `json:"name,omitempty"` // TEXT_MESSAGE_START: the agent answering
	Delta         *string `json:"delta,omitempty"`
}

// aguiToolEvent is TOOL_CALL_START/ARGS/END.
type aguiToolEvent struct {
	aguiBase
	SubagentRunID   string            `json:"subagentRunId,omitempty"`
	ToolCallID      string            `json:"toolCallId"`
	ToolCallName    string            `json:"toolCallName,omitempty"`
	ParentMessageID string            `json:"parentMessageId,omitempty"`
	Delta           *string           `json:"delta,omitempty"`
	Metadata        *aguiPageCallMeta `json:"metadata,omitempty"` // a call of a page's tool
}

type aguiToolResult struct {
	aguiBase
	SubagentRunID string          `json:"subagentRunId,omitempty"`
	MessageID     string          `json:"messageId"`
	ToolCallID    string          `json:"toolCallId"`
	Content       any             `json:"content"` // string or []aguiPart
	Role          string          `json:"role"`
	Metadata      *aguiResultMeta `json:"metadata,omitempty"`
}

// aguiResultMeta holds what a result has and the event has no field for:
// that it is an error, and the tool's structured value.
type aguiResultMeta struct {
	Runlet struct {
		IsError    bool            `json:"isError,omitempty"`
		ErrorKind  string          `json:"errorKind,omitempty"`
		Structured json.RawMessage `json:"structured,omitempty"`
	} `json:"runlet"`
}

type aguiStateSnapshot struct {
	aguiBase
	Snapshot map[string]json.RawMessage `json:"snapshot"`
}

type aguiStateDelta struct {
	aguiBase
	Delta []aguiPatchOp `json:"delta"`
}

// aguiPatchOp is one RFC 6902 operation.
type aguiPatchOp struct {
	Op    string          `json:"op"` // add, replace, remove
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

type aguiCustom struct {
	aguiBase
	SubagentRunID string `json:"subagentRunId,omitempty"`
	Name          string `json:"name"`
	Value         any    `json:"value"`
}

type aguiSubagentStarted struct {
	aguiBase
	SubagentRunID       string `json:"subagentRunId"`
	Name                string `json:"name"`
	ParentSubagentRunID string `json:"parentSubagentRunId,omitempty"`
	ParentToolCallID    string `json:"parentToolCallId,omitempty"`
}

type aguiSubagentFinished struct {
	aguiBase
	SubagentRunID string          `json:"subagentRunId"`
	Outcome       *aguiSubOutcome `json:"outcome,omitempty"`
}

type aguiSubOutcome struct {
	Type         string   `json:"type"` // success, suspended
	InterruptIDs []string `json:"interruptIds,omitempty"`
}

type aguiSubagentError struct {
	aguiBase
	SubagentRunID string `json:"subagentRunId"`
	Message       string `json:"message"`
	Code          string `json:"code,omitempty"`
}

// aguiGuardrail is the value of a "runlet.guardrail" CUSTOM event: a
// GuardrailChecked without its error's text, which may name what the
// check called.
type aguiGuardrail struct {
	Guardrail  string          `json:"guardrail"`
	Stage      string          `json:"stage"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Action     string          `json:"action"`
	Message    string          `json:"message,omitempty"`
	Info       json.RawMessage `json:"info,omitempty"`
	Failed     bool            `json:"failed,omitempty"` // the check itself failed
}
