// Package temporal runs Runlet agents as durable Temporal workflows: a run
// survives a crashed worker, a deploy in its middle, and a wait of days for
// a human's approval. It is a module of its own, so the main Runlet module
// never carries Temporal.
//
// # The model
//
// The same runlet.Agent, tools, hooks, preparers and observers run on a
// Temporal worker. New(Config{Agents: ...}) takes them, Register puts one
// workflow and its activities on a worker, and a client starts a run with
// data only: RunInput names the agent and carries the input and options.
//
//	workflow runlet.RunAgent(RunInput)       deterministic: Runlet's loop
//	  activity runlet.LoadSession            once, when SessionID is set
//	  activity runlet.CheckInput             once, when there are input
//	                                         guardrails
//	  loop:
//	    activity runlet.Model                one model call (a turn): the
//	                                         request, preparers, model-call
//	                                         hooks, the call and the answer's
//	                                         checks (schema, guardrails), as
//	                                         Runlet does
//	    activity runlet.Tool  ×N, parallel   one per tool call, at most
//	                                         RunInput.ToolConcurrency (8) at
//	                                         once; results in the model's order
//	    [wait for update runlet.decide]      calls that need approval
//	    activity runlet.AppendSession        each completed turn
//
// The workflow holds the run's state (messages, usage, counts, pending
// calls) and makes every decision from recorded activity results, so it is
// deterministic: run IDs come from the workflow ID, times from
// workflow.Now, and no wall clock or random number reaches it. Limits
// (max turns, usage limits) are checked in the workflow, as in Runlet. A
// response the provider paused (runlet.FinishPause, Anthropic's
// pause_turn) ends its model activity, and the workflow continues the turn
// with another, the paused message last in its request: each continuation
// is a turn and a request, as in Runlet. A turn's tool activities are
// scheduled a window at a time, the next as one finishes, so a model
// asking for thousands of calls never has them all pending at once (the
// server refuses a workflow task past its limit of pending activities,
// 2,000 by default); RunInput.Limits.ToolCalls refuses such a turn
// outright. Histories recorded before the window (version
// marker "runlet.tool-window") replay as they ran.
//
// # Failures and retries
//
// An activity that fails is retried under its retry policy
// (Config.ModelActivity, Config.ToolActivity). Runlet's errors decide what
// is retried: a non-retryable *runlet.ProviderError (a 400, a bad key)
// fails the activity for good, a provider's Retry-After sets the delay of
// the next attempt, a policy (a hook's error, context overflow) is never
// retried. A tool's own error is no activity failure: like in Runlet it
// becomes an is-error result the model sees. The workflow fails with an
// ApplicationError carrying the partial Result; Wait returns both, with a
// *runlet.PolicyError for a policy.
//
// # Crash safety, and what can repeat
//
// A completed activity is recorded in the workflow's history and never runs
// again: a new worker replays the history and goes on from there. An
// activity cut off in the middle (its worker died, it timed out) runs
// again: tool calls are at least once. A tool with side effects should be
// idempotent; IdempotencyKey gives it a key that is the same for every
// attempt of one call and different for every other call.
//
// # Human in the loop
//
// A call that needs approval (runlet.WithApproval, or a BeforeToolCall hook
// returning runlet.ErrApprovalRequired) makes the workflow wait, durably,
// for the runlet.decide update with one runlet.Decision per pending call —
// runlet.Approve, runlet.Reject, runlet.ApproveWithArguments, as for
// Runtime.Resume (see Decide). The runlet.pending query lists the calls
// (Pending); RunInput.ApprovalTimeout bounds the wait.
//
// The rule is Runtime.Resume's: a call that needs approval runs only with
// an approving decision for its ID delivered by the update. The update's
// validator refuses, changing nothing, decisions while the run is not
// waiting, for a call that is not pending, two for one call, none for a
// pending call, and edited arguments that are not a JSON object or that
// the input schema of the agent's tool (one of Agent.Tools) rejects; the
// pending calls are the workflow's own state, rebuilt from its history, not
// input. Calls a model gave the same ID (or none) get one unique in the
// run, so each decision names one call.
//
// An approval with edited arguments is what the history says, as with
// Runtime.Resume: the tool activity runs them, and the workflow's Result,
// the session, the next model request and the tool events show them in the
// call, with the model's in runlet.ToolCallPart.OriginalArguments.
// Workflows that recorded an edit before this behaviour replay as they ran
// (workflow.GetVersion "runlet.edited-call").
//
// # Visibility
//
// Config.Observers receive Runlet's events on the worker: model and tool
// events from the activities as they happen, run and state events from the
// workflow (never during a replay); Config.Stream makes the model activity
// stream, so they get text deltas too. The runlet.progress query
// (GetProgress) returns the turn, usage and pending calls so far. Events
// made in activities carry the run ID and turn but Seq 0, since they come
// from other processes; the workflow's own events are numbered 1, 2, 3, ...
//
// # Streaming to the caller
//
// With Config.Publisher the model activity streams and publishes each text
// and reasoning delta, as a Delta keyed by workflow ID, turn and attempt,
// the moment it arrives, and a DeltaEnd when the model call's answer is
// complete. The caller subscribes to the publisher and shows the tokens
// while the run goes on; Wait still returns the Result. Hub is a publisher
// in the worker's process with an HTTP endpoint of server-sent events
// (SubscribeHTTP reads it; examples/starter prints the tokens of a run of
// examples/worker as they arrive).
//
// Why a side channel and not the workflow: tokens do not belong in the
// history. Signals or updates from the activity would persist each one
// (hundreds of events a turn) and replay them, undoing what Config.Payloads
// does for the history's size; a query reads only the workflow's state,
// which learns a model call's answer when its activity completes. So the
// deltas go from the activity to the caller directly and the history only
// holds the answer. The cost is what a side channel is: delivery is best
// effort (a Hub drops a subscriber that falls 4,096 deltas behind), a
// retried model call streams again under a higher Attempt (the subscriber
// starts the turn over), a rejected typed answer streams before its
// repair, and with several workers the caller must reach the worker that
// runs the call, or the workers publish to a shared broker (a Publisher
// over Redis pub/sub, NATS, ...). Subscribe before starting the run to
// miss nothing. Hub's endpoint serves any workflow it is asked for: put it
// behind your authentication.
//
// # Long runs: the history holds what is new
//
// Without a payload store each model activity carries the run's messages
// so far, so a workflow's history grows with turns × messages: twenty
// turns of 20 KiB tool results already weigh 5.6 MB, past the point where
// Temporal warns (10 MB fails at 50 MB; one payload may not pass 2 MB).
// With Config.Payloads (a PayloadStore every worker shares:
// NewDirPayloadStore, or the application's own over S3, Redis, a
// database), the conversation stays out of the history:
//
//   - a tool result whose JSON passes Config.InlineLimit (2 KiB) is put in
//     the store under its content address (sha256/HEX); the history holds
//     a stand-in (CallID, Name, IsError, and a Content that says where it
//     is) and a Ref (SHA-256 and size), checked whenever it is read back;
//   - the model activity stores the transcript as a chain of chunks, one
//     per call, and gets the Ref of the last and the messages after it;
//     the session's history, loaded once, is the chain's first chunk;
//   - the session activity reads results back before appending them, so
//     the session holds the conversation in full;
//   - the workflow's Result holds the stand-ins and the refs, and Wait,
//     given the store, reads them back.
//
// A run of 200 turns, each with a 20 KiB tool result, so keeps a history
// of ~0.9 MB (18 events, ~4.4 KB a turn, the largest event ~85 KB: the
// Result's stand-ins) and puts ~4.2 MB in the store, each byte once
// (TestLongRunHistoryStaysSmall). What a turn adds to the history does not
// grow with the conversation; the assistant's messages stay in it (the
// workflow decides on their tool calls), as do the Result's stand-ins.
// A worker keeps the transcripts it resolved last in memory (64 MiB);
// a worker that takes over a run reads its chain once. A payload that is
// missing or does not match its Ref fails the run with ErrTypePayload,
// never retried: no model or caller gets other content than was stored.
// Observers of the worker see results in full in the tool events (they
// are made in the activity), and the stand-ins in the workflow's own
// RunFinished, RunFailed and RunInterrupted events.
//
// Versioning: with a store the workflow schedules the same activities in
// the same order; only what they carry changes. Histories recorded before
// the store (testdata/histories/long_v0.json) replay, and a worker with a
// store goes on with such a run, carrying its messages until its next
// model call stores them.
//
// # Limits
//
// A tool that ignores its context holds its activity until the
// StartToClose timeout. A preparer's model calls made through
// runlet.CallModel are counted in the run's usage.
//
// # Typed output
//
// StartAs[T] and WaitAs[T] are runlet.RunAs for a durable run: the run
// asks for the schema inferred from T (RunInput.Output; or the agent's
// OutputSchema), the model activity checks each final answer against it
// as a Runtime does (mode, validation, dropped optional nulls) and, when
// it fails, sends it back with what is wrong, up to RunInput.OutputRetries
// times (2), within the same activity: a rejected answer and its repair
// are recorded together, with the answer that passed, when the activity
// completes. A worker that dies mid-activity leaves nothing of it in the
// history: the next worker asks the model again from the same messages
// (TestTypedOutputAcrossACrash). The Result holds the answer's JSON in
// Output and the rejected answers in Messages; WaitAs decodes the answer
// into T. An answer still invalid after the last repair fails the run
// (ErrTypeOutput; Wait returns the *runlet.OutputError), a refusal too
// (ErrTypeRefusal, *runlet.RefusalError). Each repair counts as a turn
// and a request, as in Runlet; the workflow's limits are checked between
// activities, so an activity's repairs may pass MaxTurns by at most
// OutputRetries.
//
// # Guardrails
//
// Config.Guardrails (as runlet.WithGuardrails) and each agent's
// Agent.Guardrails run in durable runs, every check inside an activity, so
// its verdict is recorded and a replay never runs it again:
//
//   - Input checks run once, in the runlet.CheckInput activity, before the
//     first model call: always the Blocking way (no model call is spent on
//     an input that trips). Runs recorded before this activity existed
//     replay without it (workflow.GetVersion "runlet.input-guardrails").
//   - Output checks run on the final answer in the model activity, as in a
//     Runtime's run; a streamed answer they trip on is published as a
//     DeltaWithdrawn. GuardrailOutput.Value is nil: the answer is decoded
//     by WaitAs, on the caller's side.
//   - ToolCall and ToolResult checks run in the tool activity, before and
//     after the tool: a reject answers the call with an is-error result in
//     Runlet's words, a trip fails the run.
//
// A trip fails the run with policy "guardrail:" + Name (Wait's
// *runlet.PolicyError matches runlet.ErrGuardrailTripped); a check's own
// failure (error, panic, Timeout) follows OnError; every check is
// reported to the worker's observers as a GuardrailChecked event. A
// check's model calls through runlet.CallModel count in the run's usage
// only for Output checks; in the input and tool activities there is no
// run to count them in, and they are plain calls.
//
// # Tool results with parts
//
// A tool returning a runlet.ToolOutput (images, files, audio, a structured
// value) runs through Runlet's own executor in the tool activity
// (Runtime.CallTool): its parts and structured value reach the next model
// call, the session and the Result, capped as in a run (64 KiB of text and
// 20 MiB of media unless Config.MaxToolOutput says otherwise). With a
// payload store a result with media is usually over the inline limit, so
// its bytes live in the store, not the history.
//
// # Session state
//
// In a run with a SessionID, tools, tool-call hooks, model-call hooks and
// preparers reach the session's key-value state with runlet.GetState,
// SetState and DeleteState, in Config.State (default: Config.Sessions
// when it keeps state, as runlet.NewMemoryStore and the stores of store/
// do), and runlet.RunInfoFrom gives them the run's ID, session, agent and
// turn. The semantics are those of a Runtime's run with that store, plus
// what activities add:
//
//   - Reads and writes go to the store at once; the state is not in the
//     workflow's history. Every worker must share the store.
//   - Ordered across activities: the workflow schedules an activity only
//     after the ones it depends on completed, so what a turn's tools wrote
//     is read by the next model call's preparers and hooks, and by the
//     next turn's tools, on whichever worker they run.
//   - A turn's tool calls run in parallel and share the state: concurrent
//     writes of one key, last one wins, as in a Runtime.
//   - Retries: writes are not undone. An attempt that failed or was cut
//     off (a crashed worker) keeps what it wrote, and the retry sees it:
//     write idempotently (set a value rather than add to it, or key the
//     write with IdempotencyKey).
//   - A run without a SessionID has no state (runlet.ErrNoSession).
//
// The same session's state goes on in a Runtime's runs on the same store.
//
// # Sessions
//
// With RunInput.SessionID and Config.Sessions (any runlet.SessionStore,
// such as store/sqlite or store/postgres), the run continues the session
// and appends each completed turn to it, so a conversation can move between
// runlet.Runtime runs and durable runs.
package temporal
