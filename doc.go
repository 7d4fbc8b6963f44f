// Package runlet is a small, provider-neutral agent runtime: it owns the loop
// around model calls — streaming, tool execution, context preparation,
// events, hooks and state — behind one stable boundary, with providers as
// adapters (see providers/openai and providers/anthropic).
//
// It is not a hosted platform, a web framework, a graph workflow engine or a
// memory framework. It is the engine you embed.
//
// # A tour
//
// Six things in a dozen lines each; each is a runnable example on this page
// (Example_run, Example_tool, Example_stream, Example_typedOutput,
// Example_sessions, Example_severalAgents), with a scripted model from
// package runlettest standing in for the provider. Beyond this package,
// they import one provider.
//
// Run an agent. An Agent is plain data; a Runtime runs agents and is safe
// for concurrent runs:
//
//	model := openai.NewResponses(openai.Config{Model: "gpt-5-mini"}) // key from $OPENAI_API_KEY
//	agent := &runlet.Agent{Name: "assistant", Instructions: "Be concise.", Model: model}
//	rt := runlet.NewRuntime()
//	res, err := rt.Run(ctx, agent, "Say hello.")
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Println(res.Output)
//
// Add a tool: a typed Go function; its JSON Schema is inferred from the
// argument type, and the model's arguments are validated before it runs:
//
//	type WeatherArgs struct {
//		City string `json:"city" jsonschema:"the city, e.g. Shanghai"`
//	}
//	weather := runlet.NewTool("get_weather", "Current weather for a city.",
//		func(ctx context.Context, in WeatherArgs) (string, error) {
//			return "sunny, 24°C in " + in.City, nil
//		})
//	agent := &runlet.Agent{Name: "assistant", Model: model, Tools: []runlet.Tool{weather}}
//	res, err := runlet.NewRuntime().Run(ctx, agent, "Weather in Shanghai?")
//
// Stream: Runtime.Stream runs the same state machine and yields typed
// events as they happen (text deltas, tool calls, results, one terminal
// event); Runtime.Run is Stream drained, calling the model without
// streaming:
//
//	for ev, err := range rt.Stream(ctx, agent, "Weather in Shanghai?") {
//		if err != nil {
//			log.Fatal(err)
//		}
//		switch ev := ev.(type) {
//		case *runlet.TextDelta:
//			fmt.Print(ev.Delta)
//		case *runlet.ToolStarted:
//			fmt.Println("calling", ev.Call.Name)
//		}
//	}
//
// Ask for a typed answer (see Typed answers below):
//
//	type Contact struct {
//		Name  string `json:"name"`
//		Email string `json:"email,omitempty"`
//	}
//	res, err := runlet.RunAs[Contact](ctx, rt, agent, "Ada Lovelace, ada@example.com")
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Println(res.Value.Name, res.Value.Email)
//
// Keep a conversation in a session: each run loads its history and stores
// its complete turns (see State, crash safety and resume below):
//
//	rt := runlet.NewRuntime(runlet.WithStore(runlet.NewMemoryStore()))
//	_, err := rt.Run(ctx, agent, "My name is Ada.", runlet.WithSession("user-42"))
//	if err != nil {
//		log.Fatal(err)
//	}
//	res, err := rt.Run(ctx, agent, "What is my name?", runlet.WithSession("user-42"))
//
// Several agents: a handoff gives another agent the conversation
// (Agent.AsTool makes an agent another's tool instead):
//
//	billing := &runlet.Agent{Name: "billing", Description: "Refunds and invoices.", Model: model}
//	triage := &runlet.Agent{Name: "triage", Model: model, Handoffs: []runlet.Handoff{{Agent: billing}}}
//	res, err := rt.Run(ctx, triage, "I want a refund.")
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Println(res.Agent+":", res.Output)
//
// # Options
//
// Options follow one scheme at three levels. NewRuntime takes
// RuntimeOptions, a run (Run, Stream, RunAs) takes RunOptions, NewTool and
// Agent.AsTool (an agent as another's tool) take ToolOptions. A concept has one name whatever the level, and an option
// meaningful at several levels works at each, the most specific winning
// (tool over run over Runtime): WithLimits, WithMaxTurns and WithPrices (a
// SharedOption: Runtime or run; Agent.MaxTurns sits between the two),
// WithToolTimeout and WithMaxToolOutput (a ToolLimitOption: Runtime, run or
// tool), and the plural, variadic WithObservers, WithHooks, WithPreparers
// and WithGuardrails, whose run values come after the Runtime's. Run only:
// WithSession, WithHistory, WithInput, WithRunID, WithSettings,
// WithOptions, WithHeldOutput, and for typed answers WithOutputSchema, WithOutputMode and
// WithOutputRetries. Tool only: WithApproval, WithInputSchema, and for an
// agent's tool WithCallerHistory. Runtime only: the stores,
// WithToolConcurrency, WithLogger. Values an option leaves unset are documented on the option
// (20 turns, 8 concurrent tool calls, 64 KiB of tool output, 2 output
// retries). Where a run is, and how it ended (Result.Status), is one
// RunState.
//
// # The loop
//
// Idle → Thinking (model call) → Acting (tools) → Observing (results
// appended) → Thinking … → Finished | Interrupted | Failed. A turn is final
// when the model's response has no tool calls and was not paused: a
// response that ends with FinishPause (a provider paused a long turn of
// hosted tools, such as Anthropic's pause_turn) stays in the conversation
// and the model is called again, with no new message, to continue it.
// Each continuation is a model call like any other: it streams, shows as
// ModelStarted and ModelFinished, and counts as a turn (WithMaxTurns) and
// a request (UsageLimits.Requests). Its text, like text before tool
// calls, is not the answer: Result.Output is the final response's. Tool
// calls of one turn run concurrently (bounded by WithToolConcurrency: a
// pool of that many workers, however many calls the model asks for) and
// their results are appended in the model's order. An unknown tool,
// malformed or invalid arguments, a returned error, a panic or a timeout
// each become an is-error tool result the model can act on; the run goes
// on. A forced tool choice
// (Agent.ToolChoice required or a named tool) holds until the agent has
// called a tool: the next request asks with ToolChoiceAuto, so the run can
// end (Agent.KeepToolChoice keeps forcing).
//
// A tool's result is text, or, when the tool returns a ToolOutput (a
// NewTool function with Out = ToolOutput, or a PartsTool), text, images,
// files, audio and a structured value: ToolResultPart keeps the text in
// Content and the rest in Parts and Structured, and each provider adapter
// sends the parts the way its API takes them in a tool result, by a
// documented fallback where it takes none, or fails with ErrInvalidRequest;
// a part is never dropped silently. The output cap (WithMaxToolOutput)
// counts media and never cuts it (ToolOutputTooLarge).
//
// Every run ends with exactly one terminal event: *RunFinished,
// *RunInterrupted or *RunFailed. A run stopped by a policy (max turns, a
// usage limit, a hook, a guardrail, context overflow) returns a
// *PolicyError naming it.
//
// # Usage and cost
//
// Result.Usage sums every model call of the run, split by purpose, by agent
// and by the model that answered (UsageByModel, keyed by the name the
// provider reported, so a Fallback run shows each model it used). With a
// price table (WithPrices; package pricing has a dated one) each call's
// cost is on ModelFinished.Cost and the run's on Result.Cost, split by
// model (CostByModel) and by agent (CostByAgent); a model without a price leaves its calls unpriced, their
// cost unknown rather than zero (Cost.Known).
//
// # Typed answers
//
// RunAs asks for a Go value: the JSON Schema is inferred from the type (or
// taken from Agent.OutputSchema), the final answer is validated and
// decoded, and an answer that is not valid JSON, breaks the schema or does
// not decode goes back to the model with the errors, up to
// WithOutputRetries times; then the run fails with an *OutputError. A
// refusal fails with a *RefusalError. The output mode is chosen per model
// (OutputModer): the provider's native structured output, a forced output
// tool, or the schema in the prompt; WithOutputMode overrides it, and
// OutputChecked events say which was used. StreamAs yields the value as it
// fills in, from OutputPartial events.
//
// # Extending
//
// Hooks (a struct of optional funcs) change behaviour: edit requests,
// short-circuit or deny tool calls, ask for human approval. Observers only
// watch. Preparers shape the context before every model call (KeepLastTurns,
// KeepLastMessages, TokenBudget, Summarizer). Stores keep session history, session key-value
// state and checkpoints of interrupted runs; NewMemoryStore is built in,
// store/sqlite and store/postgres are durable.
//
// # Guardrails
//
// A Guardrail checks the run's input, its final answer (text, and RunAs's
// value) and its tool calls (arguments before, result after), and passes,
// rejects a tool call or result with an is-error result the model sees, or
// trips: the run ends with a *PolicyError (policy "guardrail:" + name)
// wrapping a *GuardrailTripped (ErrGuardrailTripped). Input checks run
// beside the agent's first model call, so passing ones cost no wall time,
// and a tripwire cancels that call at once (it counts as one request);
// Blocking ones run before it. For a Stream, deltas of an answer a
// tripwire stops are followed by OutputWithdrawn, or with WithHeldOutput
// are held back until the checks pass. A check may call a model through
// CallModel; a check's own failure fails closed unless FailOpen. Each
// check is a GuardrailChecked event. Agent.Guardrails go wherever the
// agent runs; WithGuardrails adds the run's own (see Guardrail for which
// run where, agents called as tools, handoffs and Resume). Package
// guardrails has ready ones (PII and regular-expression screens, an input
// size bound, a model-based classifier); the temporal module runs each
// check in an activity.
//
// # State, crash safety and resume
//
// Sessions need a store: NewRuntime(WithStore(NewMemoryStore())) in one
// process, store/sqlite or store/postgres across processes; a run
// WithSession on a Runtime without one fails before any model call. With
// WithSession, a run loads the session's history first and appends
// each completed turn (the assistant message and all its tool results, plus
// the input with the first turn) in one atomic AppendSession, guarded by an
// optimistic length check. A run that fails, is cancelled or whose process
// is killed leaves the session with complete turns only — never a tool call
// without its result. What the store does not hold is redone: running the
// same input again repeats the unfinished turn, so its tool calls may run
// twice. Tool execution is therefore at-least-once across crashes; a tool
// with side effects should be idempotent, for example keyed by
// ToolCallPart.ID (unique per call and stable in the stored history) or by
// RunInfoFrom(ctx).RunID, with the key kept in its own store or in session
// state (SetState).
//
// A tool made WithApproval, or a BeforeToolCall hook returning
// ErrApprovalRequired, interrupts the run: the other calls of the turn run,
// then the run saves a Checkpoint and ends with StateInterrupted and the
// pending calls. Runtime.Resume, in any process sharing the store, claims
// the checkpoint atomically (exactly one of concurrent resumes proceeds, and
// wrong decisions fail before anything is claimed), runs the approved calls
// and continues. A decision is for the call it names in the interrupted
// turn only: a call of a later turn that reuses its ID waits for a decision
// of its own. It is the same run: it keeps the settings, options, limits
// and max turns it started with, and its usage, request and tool-call counts
// and turn number go on from where they were. A resuming process that dies after the claim loses the
// decisions and the checkpoint: the approved calls ran at most once, and the
// session still holds only the complete turns before the interruption.
//
// A checkpoint cannot approve anything. The store is outside the program
// (another process, a backup, an operator can change a row), so Resume
// treats a checkpoint as input: before acting on it, it checks that the
// checkpoint is consistent with the turn it interrupted (see Checkpoint)
// and otherwise refuses it with a *CheckpointError (ErrInvalidCheckpoint),
// before any tool runs and without consuming it. A call that needs
// approval runs only with the caller's approving Decision for its ID,
// whatever the checkpoint says. A checkpoint cannot add a call to the
// interrupted turn either: each call must be pending, nested or done. A
// call the checkpoint says is done does not run again; its result is what
// the model sees. So an edited but consistent checkpoint can still change
// what the model is told (messages, results, the arguments awaiting a
// decision) and the run's settings, options and limits, as a hostile model
// or tool could; WithCheckpointKey detects any such change: the Runtime
// saves each checkpoint with an HMAC-SHA256 and refuses, with
// ErrCheckpointMAC, one whose MAC does not match.
//
// # Writing a provider
//
// The application's API and the provider's contract are apart, as in
// database/sql and database/sql/driver. An application uses this package:
// Agent, Runtime, Run and Stream, Result, Message, Tool, Hooks, Observer,
// the options. A provider implements Model — Generate, and Stream yielding
// StreamEvent deltas that end with one StreamDone event carrying the
// assembled *ModelResponse — with the contract types that also appear in the
// application's API (ModelRequest, ModelResponse, StreamEvent, Usage,
// FinishReason, ToolSpec, the parts) and reports failures as
// *ProviderError. The provider author's toolkit is package modelkit
// (github.com/runlet/runlet/modelkit): modelkit.Accumulator assembles the
// response from deltas, modelkit.StreamResponse and modelkit.Collect derive
// one method from the other, and modelkit.GenerateFunc and
// modelkit.StreamFunc make a Model from a function. Package
// modelkit/modeltest is the conformance suite a provider's test runs in one
// line (modeltest.Run against the fake server of its wire, as every adapter
// here does); runlettest has a scripted fake Model and fake wire servers for
// other tests.
//
// The names on this page that are a provider's and seldom an
// application's: Model, ModelRequest, ModelResponse, StreamEvent and
// StreamEventKind (StreamTextDelta … StreamDone), OutputModer,
// ProviderError, and the sentinels a provider's errors wrap:
// ErrInvalidRequest, ErrStreamIncomplete, ErrMalformedStream,
// ErrResponseTooLarge. Every other name is the application's. STYLE.md in
// the repository lists, for maintainers, the names no example shows.
package runlet
