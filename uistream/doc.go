// Package uistream serves an agent to a web page in the streaming
// protocols chat front ends already speak: an http.Handler runs the agent
// for a request and streams the run as the page's client library expects
// it. Runlet stays a library, not a UI: this package translates, the page
// is yours.
//
//   - NewAISDKHandler speaks the Vercel AI SDK's UI message stream
//     protocol (ai@7, header x-vercel-ai-ui-message-stream: v1), which
//     useChat from @ai-sdk/react reads.
//   - The AG-UI handler speaks AG-UI (CopilotKit and @ag-ui/client); see
//     its section below.
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
//     other: system messages and reasoning in it are dropped, and a tool
//     call goes back to the model only with its output. With
//     Options.Session the history is the server's own, the session's in
//     the Runtime's store (runlet.WithStore), and the client sends only
//     the new message that counts.
//   - Body size: Options.MaxBodyBytes (DefaultMaxBodyBytes); a larger body
//     is answered 413 before anything runs.
//   - CORS: none by default, so only pages of the handler's own origin can
//     read its answers; Options.AllowOrigins opens it to others.
//   - Errors: a failed run's error reaches the page as the protocol's
//     error event with Options.ErrorText's text, by default
//     DefaultErrorText's, which only classifies it: an error's own text
//     may name hosts, paths or a provider's message. A bad request is
//     answered 400 with what is wrong with it.
//
// # Approvals from the page
//
// A call that needs approval (runlet.WithApproval, or a BeforeToolCall
// hook) interrupts the run; the Runtime keeps its checkpoint in its store.
// The handler asks the page in the protocol's way, with the run's ID as
// the approval's ID, and the page's answer is a new request that resumes
// the run (Runtime.ResumeStream) with one runlet.Decision per pending
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
// named by the approvals' ID, and the resumed run goes on in the same
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
//	                                   tool-input-available {input} per call, message-metadata {usage, cost}
//	ModelFinished (other purposes)     counted in the usage metadata only
//	ToolStarted                        tool-input-available, when the page lacks the call or its
//	                                   arguments were edited on approval
//	ToolFinished                       tool-output-available {output: the result, as JSON when it is
//	                                   a JSON object or array, else text}; tool-output-error
//	                                   {errorText} for an error result; tool-output-denied for a
//	                                   call rejected by a person or denied by a hook
//	RunInterrupted                     tool-input-available and tool-approval-request
//	                                   {approvalId: run ID, toolCallId} per pending call,
//	                                   finish-step, finish {finishReason: "tool-calls"}
//	OutputPartial                      data-output {id: "output", data: the value so far}
//	OutputChecked (valid), RunFinished data-output {id: "output", data: the typed answer}
//	                                   (a run with an output schema, as RunAs and StreamAs make)
//	HandoffOccurred                    data-handoff {data: {from, to}}
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
// # AG-UI
//
// (The AG-UI handler and its mapping table are documented here when it lands.)
package uistream
