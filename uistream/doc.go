// Package uistream serves an agent to a web page in the streaming
// protocols chat front ends already speak: an http.Handler runs the agent
// for a request and streams the run as the page's client library expects
// it. Runlet stays a library, not a UI: this package translates, the page
// is yours.
//
//   - NewAISDKHandler speaks the Vercel AI SDK's UI message stream
//     protocol (ai 7, tested with AISDKVersion; header
//     x-vercel-ai-ui-message-stream: v1), which useChat from @ai-sdk/react
//     reads.
//   - NewAGUIHandler speaks AG-UI 1.0 (@ag-ui/client's HttpAgent,
//     CopilotKit); see its section below.
//
// Every handler takes the same Options:
//
//	rt := runlet.NewRuntime(runlet.WithStore(store))
//	http.Handle("POST /api/chat", uistream.NewAISDKHandler(uistream.Options{
//		Runtime: rt,
//		Agent:   agent,
//	}))
//
// examples/webchat is a complete server with a React page built on useChat.
//
// # A request, a run
//
// Each POST runs the agent once, or resumes a run that waits for
// approval, and streams its events as server-sent events until the run
// ends. The request's context is the run's: a client that disconnects
// cancels the run, which stops the model stream and the tools and leaks
// nothing (Runtime.Stream's guarantee). Events are not queued: the run
// waits while a slow client reads, so memory does not grow with the
// client's delay, and a write that waits longer than Options.WriteTimeout
// cancels the run.
//
// The web's facts of life, and the option for each:
//
//   - History: useChat sends the whole conversation on every request. By
//     default it is the run's history (runlet.WithHistory), input like any
//     other: system messages, reasoning and provider-hosted tools' parts
//     in it are dropped, and a tool call goes back to the model only with
//     its output. With
//     Options.Session the history is the server's own, the session's in
//     the Runtime's store (runlet.WithStore), and the client sends only
//     the new message that counts (useChat's regenerate then adds a new
//     answer after the old one, which the session keeps).
//   - Body size: Options.MaxBodyBytes (DefaultMaxBodyBytes); a larger body
//     is answered 413 before anything runs.
//   - Proxies: one with a read timeout (nginx's proxy_read_timeout, 60 s
//     by default; a load balancer's idle timeout) cuts a stream that stays
//     silent while a tool or the model takes its time. After
//     Options.KeepAlive (DefaultKeepAlive, 15 s) without a write, the
//     handler sends an SSE comment line, ": keep-alive", which the
//     protocols' clients skip as the SSE format says; it goes between
//     frames, under the same write timeout.
//   - CORS: none by default, so only pages of the handler's own origin can
//     read its answers; Options.AllowOrigins opens it to others.
//   - Errors: a failed run's error reaches the page as the protocol's
//     error event with Options.ErrorText's text, by default
//     DefaultErrorText's, which only classifies it: an error's own text
//     may name hosts, paths or a provider's message. A bad request is
//     answered 400 with what is wrong with it. Tool results, error
//     results included, reach the page as the model sees them.
//
// # Approvals from the page
//
// A call that needs approval (runlet.WithApproval, or a BeforeToolCall
// hook) interrupts the run; the Runtime keeps its checkpoint in its store.
// The handler asks the page in the protocol's way, naming the run (the
// AI SDK's approval ID is the run's ID, ":" and the call's), and the
// page's answer is a new request that resumes the run
// (Runtime.ResumeStream) with one runlet.Decision per pending
// call. The resuming process may be another one sharing the store. The
// run ID, random and unguessable, entitles whoever holds it to answer;
// with Options.Checkpoints and Options.Session a resume must also come
// from the run's session. As Runtime.Resume guarantees, only the page's
// answer approves a call, a resume happens at most once, and answers that
// do not match the pending calls are refused without consuming the run.
//
// # The AI SDK UI message stream
//
// The request is useChat's (HttpChatTransport): {"id", "messages",
// "trigger", "messageId", ...}. A last message from the user is the input
// of a new run, after the messages before it. A last message from the
// assistant whose tool parts hold approval answers (state
// "approval-responded", which addToolApprovalResponse sets; useChat sends
// it by itself with sendAutomaticallyWhen:
// lastAssistantMessageIsCompleteWithApprovalResponses) resumes the run
// their approval IDs name, and the resumed run goes on in the same
// assistant message (its ID is the run's).
//
// The response is text/event-stream, one chunk per "data:" line, ending
// with "data: [DONE]". Event by event (depth 0: the run's own agent):
//
//	Runlet event                       UI message chunks
//	RunStarted, RunResumed             start {messageId: run ID, messageMetadata: {runId}}
//	ModelStarted (agent's turn)        finish-step (of the previous step, if open), start-step
//	ReasoningDelta                     reasoning-start (when a reasoning part opens), reasoning-delta
//	TextDelta                          text-start (when a text part opens), text-delta
//	                                   (a part ends with reasoning-end / text-end when another kind
//	                                   of output starts, or the step ends)
//	ToolCallDelta                      tool-input-start {toolCallId, toolName, dynamic: true}
//	                                   (once the call's ID and name are known), tool-input-delta
//	ModelFinished (agent's turn)       the text and reasoning of a model that does not stream,
//	                                   source-url {sourceId, url, title} per cited URL (source-document
//	                                   for a cited file), once per source in a response,
//	                                   tool-input-available {input} per call, message-metadata {usage, cost}
//	ModelFinished (other purposes)     counted in the usage metadata only
//	ToolStarted                        tool-input-available, when the page lacks the call or its
//	                                   arguments were edited on approval
//	ToolFinished                       tool-output-available {output: the structured value the tool
//	                                   returned, else the result's text (as JSON when it is a JSON
//	                                   object or array)}; tool-output-error {errorText} for an error
//	                                   result; tool-input-error {input, errorText} for a call of an
//	                                   unknown tool or with invalid arguments (ToolUnknown,
//	                                   ToolInvalidJSON, ToolInvalidArgs); tool-output-denied for a
//	                                   call rejected by a person or denied by a hook; then one file
//	                                   {url, mediaType, providerMetadata: {runlet: {toolCallId}}}
//	                                   per image, file or audio part of the result (inline bytes as
//	                                   a data: URL)
//	HostedToolFinished                 tool-input-available and tool-output-available (or
//	                                   tool-output-error) {providerExecuted: true, output: {output,
//	                                   sources}}: a provider-hosted tool, such as web search
//	RunInterrupted                     tool-input-available and tool-approval-request
//	                                   {approvalId: run ID ":" call ID, toolCallId} per pending call,
//	                                   finish-step, finish {finishReason: "tool-calls"}
//	OutputPartial                      data-output {id: "output", data: the value so far}
//	OutputChecked (valid), RunFinished data-output {id: "output", data: the typed answer}
//	                                   (a run with an output schema, as RunAs and StreamAs make)
//	HandoffOccurred                    data-handoff {data: {from, to}}
//	GuardrailChecked (any depth)       data-guardrail {data: {guardrail, stage, toolCallId, action,
//	                                   message, info, failed}}, transient when the check passed;
//	                                   a failed check's own error is not sent
//	OutputWithdrawn                    text-end, reset-step (the page's message drops the step's
//	                                   parts: the withdrawn text), the tripwire's data-guardrail again
//	RunFinished                        finish-step, finish {finishReason: "stop", messageMetadata}
//	RunFailed                          finish-step, error {errorText: Options.ErrorText},
//	                                   finish {finishReason: "error"}
//	(no terminal event)                error, finish {finishReason: "error"}
//	other events                       none (StateChanged, ContextPrepared, and event types
//	                                   newer than this package)
//
// messageMetadata, merged into the assistant message's metadata, is
// {runId, status, usage, cost, turns}: usage is runlet.Usage's JSON, cost
// runlet.Cost's (left out when no call was priced).
//
// An agent called as a tool (Agent.AsTool) runs inside its caller's tool
// call; its events (depth > 0) become data parts keyed by the call path
// (EventHeader.CallPath), which the page draws under that call:
//
//	AgentStarted, AgentFinished        data-agent {id: call path, data: {agent, callPath, depth,
//	                                   status: running|finished|interrupted|failed, output, errorType}}
//	ToolStarted, ToolFinished          data-agent-tool {id: call path/call ID, data: {callPath, agent,
//	                                   toolCallId, toolName, input, state, output, errorText}}
//	TextDelta                          data-agent-delta {transient: true, data: {callPath, agent, delta}}
//
// A call of such an agent that waits for approval is asked of the page as
// any other (tool-input-available, tool-approval-request), and its
// outcome after the answer goes to that tool part too.
//
// # AG-UI
//
// NewAGUIHandler speaks AG-UI protocol version 1.0 (AGUIProtocolVersion;
// @ag-ui/core and @ag-ui/client 1.0.0 in its tests), with the same
// Options, and optionally session state to share with the page:
//
//	http.Handle("POST /api/agui", uistream.NewAGUIHandler(opts,
//		uistream.AGUIState{Store: store, Keys: []string{"cart"}}))
//
// The request is a
// RunAgentInput: {threadId, runId, messages, state, tools, context,
// forwardedProps, resume}. threadId is the conversation ID
// (Options.Session's chatID). Without resume, the trailing user messages
// are the run's input and the messages before them its history, read as
// the AI SDK's are: system, developer, reasoning and activity messages
// and messages of sub-agents (subagentRunId) are dropped, tool messages
// become tool results (error set: an error result). Content parts may be
// text, and images, documents and audio inline (base64 "data") or by
// https URL, in user and tool messages; others (video, provider file
// handles) are refused with 400. context entries reach the
// model as text at the head of the user's message ("Context from the
// application:"), never as instructions. tools are the page's own tools
// (see Frontend tools below); forwardedProps is not used.
//
// The response is text/event-stream, one AG-UI event per "data:" line,
// each with a timestamp (Unix ms). runId and threadId in RUN_STARTED and
// RUN_FINISHED are the client's; Runlet's own run ID travels in the
// interrupt IDs. Event by event:
//
//	Runlet event                       AG-UI events
//	RunStarted, RunResumed             RUN_STARTED {threadId, runId, protocolVersion},
//	                                   then STATE_SNAPSHOT (with AGUIState and a session)
//	StateChanged to thinking / acting  STEP_STARTED {stepName: "thinking" | "acting"};
//	                                   the next StateChanged sends its STEP_FINISHED
//	ModelStarted (agent's turn)        none; names the turn's assistant message
//	ReasoningDelta                     REASONING_START and REASONING_MESSAGE_START {role: "reasoning"}
//	                                   when reasoning opens, REASONING_MESSAGE_CONTENT
//	TextDelta                          TEXT_MESSAGE_START {role: "assistant", name: the agent} when
//	                                   text opens (after a handoff, the agent handed to),
//	                                   TEXT_MESSAGE_CONTENT
//	                                   (reasoning ends with REASONING_MESSAGE_END and REASONING_END,
//	                                   text with TEXT_MESSAGE_END, when other output starts or the
//	                                   model call ends)
//	ToolCallDelta                      TOOL_CALL_START {toolCallId, toolCallName, parentMessageId:
//	                                   the turn's assistant message; for a page's tool, metadata
//	                                   {runlet: {runId}}} once the call's ID and name are known,
//	                                   TOOL_CALL_ARGS per fragment
//	ModelFinished (agent's turn)       the text, reasoning and calls of a model that does not stream,
//	                                   TOOL_CALL_END per call, CUSTOM "runlet.citations" {messageId,
//	                                   citations: [{url, title, fileId, citedText, start, end}]}
//	                                   when the text cites sources; then, for every purpose,
//	                                   CUSTOM "runlet.usage" {agent, purpose, model, usage, cost}
//	HostedToolFinished                 CUSTOM "runlet.hosted_tool" {id, kind, name, input, output,
//	                                   sources, isError} (a provider-hosted tool: no AG-UI tool call,
//	                                   which the page would send back as the agent's own)
//	ToolFinished                       TOOL_CALL_RESULT {toolCallId, role: "tool", content: the text,
//	                                   or, for a result with parts, its parts (text, and image,
//	                                   document, audio with a "data" (base64) or "url" source)},
//	                                   metadata {runlet: {isError, errorKind, structured}} for an
//	                                   error result or a structured value; then STATE_DELTA when
//	                                   the shared state changed
//	AgentStarted (depth > 0)           SUBAGENT_STARTED {subagentRunId: call path, name: agent,
//	                                   parentToolCallId, parentSubagentRunId}
//	AgentFinished                      SUBAGENT_FINISHED {outcome: success | suspended
//	                                   {interruptIds}}, or SUBAGENT_ERROR {message: ErrorText, code}
//	HandoffOccurred                    CUSTOM "runlet.handoff" {from, to}
//	OutputPartial                      CUSTOM "runlet.output.partial" {attempt, json}
//	OutputChecked                      CUSTOM "runlet.output.checked" (the event's JSON)
//	GuardrailChecked                   CUSTOM "runlet.guardrail" {guardrail, stage, toolCallId, action,
//	                                   message, info, failed} (never the check's own error text)
//	OutputWithdrawn                    TEXT_MESSAGE_END if open, CUSTOM "runlet.output.withdrawn"
//	                                   {guardrail, stage, messageIds}: the page removes those
//	                                   messages (AG-UI has no event that takes text back)
//	RunFinished                        STATE_DELTA (if changed), RUN_FINISHED {outcome: success,
//	                                   usage: per model, result: the typed answer (a run with an
//	                                   output schema, as RunAs and StreamAs make), metadata}
//	RunInterrupted                     STATE_SNAPSHOT (with shared state), RUN_FINISHED {outcome:
//	                                   interrupt {interrupts}, usage, metadata}; no MESSAGES_SNAPSHOT:
//	                                   the client has the messages, the resume Runlet's checkpoint.
//	                                   When only calls of the page's tools wait: RUN_FINISHED
//	                                   {outcome: success {pendingToolCallIds}}
//	RunFailed, or no terminal event    RUN_ERROR {message: Options.ErrorText, code: ErrorType,
//	                                   metadata}
//	other events                       none (ContextPrepared, ToolStarted, ModelStarted's request,
//	                                   event types newer than this package)
//
// metadata is {runlet: {runId, usage, cost, turns}}: Runlet's run ID (for
// the server's logs), and the run's usage and cost as runlet.Usage's and
// runlet.Cost's JSON.
//
// Events of an agent called as a tool (depth > 0) are mapped the same way
// and carry subagentRunId, its call path (EventHeader.CallPath). Before
// RUN_FINISHED everything still open is closed, as AG-UI's client
// requires.
//
// Approval uses AG-UI's interrupts: the run ends with RUN_FINISHED
// {outcome: {type: "interrupt", interrupts}}, one interrupt per pending
// call: {id: "<Runlet run ID>:<call ID>" (each query-escaped), reason:
// "tool_call", toolCallId, message, responseSchema, metadata: {runlet:
// {tool, arguments}}}. The page answers with a new RunAgentInput on the
// same thread whose resume holds one entry per interrupt: status
// "resolved" with payload {approved: true} approves, {approved: true,
// editedArgs: {...}} approves with the arguments replaced
// (runlet.ApproveWithArguments), {approved: false, reason} rejects (the
// model reads the reason); status "cancelled" rejects. Its messages are
// not read: the run goes on from its checkpoint (Runtime.ResumeStream),
// and the tool call's TOOL_CALL_RESULT comes in the new run without the
// call being streamed again, as the protocol's interrupts page asks.
//
// Frontend tools, AG-UI's other human-in-the-loop path (CopilotKit's
// frontend actions): the tools of RunAgentInput are offered to the model
// beside the agent's own, except one named as one of the agent's tools or
// handoffs, which stays the server's (a page cannot stand in for it). A
// call of a page's tool stops the run as an approval does (a checkpoint in
// the store), its TOOL_CALL_START carrying the Runlet run ID in its
// metadata, and the run finishes with {outcome: {type: "success",
// pendingToolCallIds}} as AG-UI asks. The page runs the tool and sends its
// result as a tool message after that assistant message (whose tool call
// keeps the metadata, as @ag-ui/client does); that request goes on with
// the run (Runtime.ResumeStream), the result given to the model as the
// tool's, and the page is not sent back its own result. The request must
// declare the tool again. A run waiting for both a page's tool and an
// approval ends with interrupts for all of them; approving the page's call
// there gives the model an error result.
//
// State: AG-UI's state is a JSON object the page and the agent share.
// Given an AGUIState, the handler shares those keys of the session's
// key-value state (runlet.GetState and SetState in tools): before the run,
// each key present in the page's state is written to the session (null
// deletes it); STATE_SNAPSHOT then sends the keys' values, and
// STATE_DELTA (JSON Patch add, replace, remove on "/key") sends what
// changed after each tool call and before the run ends. Values are JSON
// (bytes that are not are sent as a string). Without a session there is
// no state and no state event. The page writes those keys, so treat them
// as the user's input.
package uistream
