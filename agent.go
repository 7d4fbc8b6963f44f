package runlet

// Agent is plain data: what to say to which model, with which tools. An
// Agent literal is enough; it is safe to share between goroutines and runs
// as long as nobody modifies it while runs use it.
type Agent struct {
	// Name labels events and logs, and names the agent's tool (AsTool).
	Name string
	// Description says what the agent does, for other agents: it describes
	// the agent's tool (see AsTool).
	Description string
	// Instructions is the system prompt.
	Instructions string
	// Model answers; required.
	Model Model
	// Tools the model may call.
	Tools []Tool
	// HostedTools are tools the provider runs on its side, such as web
	// search (see HostedTool); what they did comes back in the history as
	// HostedToolParts.
	HostedTools []HostedTool
	// Toolsets add tools that may change from one model call to the next,
	// such as an MCP server's (see Toolset).
	Toolsets []Toolset
	// Settings and Options are the default request settings and
	// provider-specific options; run options override them key by key.
	Settings Settings
	Options  map[string]any
	// ToolChoice goes into the agent's requests until the agent has called
	// a tool in the run. After that turn, a forced choice
	// (ToolChoiceRequired or ToolChoiceTool) goes back to ToolChoiceAuto,
	// so that the model can answer rather than call tools until MaxTurns;
	// an agent handed the conversation (see Handoff) starts forced again.
	// KeepToolChoice sends ToolChoice in every request instead: a run that
	// keeps forcing ends only at a limit or a tool that stops it.
	ToolChoice     ToolChoice
	KeepToolChoice bool
	// OutputSchema goes into every request of the agent's runs.
	OutputSchema *OutputSchema
	// Handoffs are the agents this one may hand the conversation to (see
	// Handoff).
	Handoffs []Handoff
	// MaxTurns bounds model calls per run; zero means the runtime's limit.
	MaxTurns int
	// Guardrails check the agent's input, final answer and tool calls,
	// and can stop the run (see Guardrail).
	Guardrails []Guardrail
}

// Result is the outcome of a run. On failure Run returns the error and a
// non-nil partial Result.
type Result struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id,omitempty"`
	// Status is how the run ended: StateFinished, StateInterrupted or
	// StateFailed.
	Status RunState `json:"status"`
	// Agent names the agent that ran.
	Agent string `json:"agent,omitempty"`
	// Output is the final answer's text; Reasoning its reasoning text.
	Output    string `json:"output"`
	Reasoning string `json:"reasoning,omitempty"`
	// Messages are what this run added: the input, then every assistant
	// message and tool result, in order.
	Messages []Message `json:"messages"`
	// Usage is summed over every model call the run made, the agent's turns
	// and its preparers' calls (see CallModel); UsageByPurpose splits it by
	// purpose (PurposeAgent, "summarize", ...).
	Usage          Usage            `json:"usage"`
	UsageByPurpose map[string]Usage `json:"usage_by_purpose,omitempty"`
	// UsageByModel splits Usage by the model that answered each call, by
	// the name its provider reported (ModelResponse.Model, such as
	// "gpt-4o-2024-08-06"; the requested model when the provider reports
	// none; empty for a custom Model that sets none): a run
	// that fell back from one model to another (see Fallback) has both.
	UsageByModel map[string]Usage `json:"usage_by_model,omitempty"`
	// Cost is what the calls cost by the run's price table (see
	// WithPrices), and CostByModel splits it as UsageByModel splits Usage.
	// When Cost.Known() is false, some calls had no price and Amount is
	// only the known part.
	Cost        Cost            `json:"cost"`
	CostByModel map[string]Cost `json:"cost_by_model,omitempty"`
	// UsageByAgent splits Usage by the name of the agent that made the
	// call: the run's agent, the agents it handed off to and the agents it
	// called as tools (AsTool). CostByAgent splits Cost the same way, so
	// its amounts and unpriced counts sum to Cost's.
	UsageByAgent map[string]Usage `json:"usage_by_agent,omitempty"`
	CostByAgent  map[string]Cost  `json:"cost_by_agent,omitempty"`
	// Turns counts model calls.
	Turns int `json:"turns"`
	// Pending lists the calls waiting for a decision when Status is
	// StateInterrupted.
	Pending []ToolCallPart `json:"pending,omitempty"`
}
