package bedrock

import "encoding/json"

// The Converse wire format (restJson1): unions are objects with one key,
// blobs are base64 strings, documents are JSON values. Field names are
// those of the AWS API reference (ConverseRequest, ContentBlock, ...).

type wireRequest struct {
	Messages                     []wireMessage   `json:"messages"`
	System                       []wireSystem    `json:"system,omitempty"`
	InferenceConfig              *wireInference  `json:"inferenceConfig,omitempty"`
	ToolConfig                   *wireToolConfig `json:"toolConfig,omitempty"`
	OutputConfig                 map[string]any  `json:"outputConfig,omitempty"`
	AdditionalModelRequestFields map[string]any  `json:"additionalModelRequestFields,omitempty"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

// wireBlock is a ContentBlock: exactly one field is set.
type wireBlock struct {
	Text             *string         `json:"text,omitempty"`
	Image            *wireImage      `json:"image,omitempty"`
	Document         *wireDocument   `json:"document,omitempty"`
	ToolUse          *wireToolUse    `json:"toolUse,omitempty"`
	ToolResult       *wireToolResult `json:"toolResult,omitempty"`
	ReasoningContent *wireReasoning  `json:"reasoningContent,omitempty"`
	CachePoint       json.RawMessage `json:"cachePoint,omitempty"`
}

// wireSystem is a SystemContentBlock.
type wireSystem struct {
	Text       *string         `json:"text,omitempty"`
	CachePoint json.RawMessage `json:"cachePoint,omitempty"`
}

type wireImage struct {
	Format string     `json:"format"`
	Source wireSource `json:"source"`
}

type wireDocument struct {
	Format string     `json:"format,omitempty"`
	Name   string     `json:"name"`
	Source wireSource `json:"source"`
}

// wireSource is an ImageSource or DocumentSource.
type wireSource struct {
	Bytes      string  `json:"bytes,omitempty"` // base64
	S3Location *wireS3 `json:"s3Location,omitempty"`
	Text       *string `json:"text,omitempty"`
}

type wireS3 struct {
	URI         string `json:"uri"`
	BucketOwner string `json:"bucketOwner,omitempty"`
}

type wireToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Type      string          `json:"type,omitempty"`
}

type wireToolResult struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []wireResultContent `json:"content"`
	Status    string              `json:"status,omitempty"`
}

type wireResultContent struct {
	Text     *string       `json:"text,omitempty"`
	Image    *wireImage    `json:"image,omitempty"`
	Document *wireDocument `json:"document,omitempty"`
}

// wireReasoning is a ReasoningContentBlock.
type wireReasoning struct {
	ReasoningText   *wireReasoningText `json:"reasoningText,omitempty"`
	RedactedContent string             `json:"redactedContent,omitempty"` // base64
}

type wireReasoningText struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

type wireInference struct {
	MaxTokens     int      `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

type wireToolConfig struct {
	Tools      []wireTool      `json:"tools"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
}

// wireTool is a Tool union: a toolSpec or a cachePoint.
type wireTool struct {
	ToolSpec   *wireToolSpec   `json:"toolSpec,omitempty"`
	CachePoint json.RawMessage `json:"cachePoint,omitempty"`
}

type wireToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema wireInputSchema `json:"inputSchema"`
}

type wireInputSchema struct {
	JSON json.RawMessage `json:"json"`
}

// wireResponse is a ConverseResponse.
type wireResponse struct {
	Output struct {
		Message *struct {
			Role    string         `json:"role"`
			Content []wireOutBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason                    string          `json:"stopReason"`
	Usage                         *wireUsage      `json:"usage"`
	Metrics                       json.RawMessage `json:"metrics"`
	Trace                         json.RawMessage `json:"trace"`
	AdditionalModelResponseFields json.RawMessage `json:"additionalModelResponseFields"`
	PerformanceConfig             json.RawMessage `json:"performanceConfig"`
	ServiceTier                   json.RawMessage `json:"serviceTier"`
}

// wireOutBlock is a ContentBlock of a response. Blocks the adapter does
// not read (citations, guard content, images) decode to nothing.
type wireOutBlock struct {
	Text             *string        `json:"text"`
	ToolUse          *wireToolUse   `json:"toolUse"`
	ReasoningContent *wireReasoning `json:"reasoningContent"`
}

type wireUsage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens"`
}
