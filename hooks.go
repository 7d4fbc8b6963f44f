package runlet

import "context"

// Hooks change what a run does, like net/http/httptrace.ClientTrace: a struct
// of optional funcs, nil ones skipped. Several Hooks compose in the order
// they were given to WithHooks. Hooks run on the run's goroutine, one at a
// time, never concurrently with each other within an agent's run. An agent
// called as a tool (see Agent.AsTool) runs the run's hooks on its own
// goroutine: when a model calls several such agents at once, a hook may be
// called concurrently, once for each.
//
// Observers, by contrast, only watch (see Observer).
type Hooks struct {
	// BeforeModelCall may edit the request after the preparers ran. An
	// error fails the run (policy "hook:BeforeModelCall").
	BeforeModelCall func(ctx context.Context, req *ModelRequest) error
	// AfterModelCall may edit the response before the run acts on it. An
	// error fails the run (policy "hook:AfterModelCall").
	AfterModelCall func(ctx context.Context, req *ModelRequest, resp *ModelResponse) error
	// BeforeToolCall runs before each tool call. It may:
	//   - edit call.Arguments (later hooks and the tool see the edit; the
	//     history keeps the model's call, since a hook may add what the
	//     model must not see: to change the call itself, as a person,
	//     return ErrApprovalRequired and resume with ApproveWithArguments);
	//   - short-circuit: return a non-nil result, used instead of running the tool;
	//   - deny: return Deny(reason); the model sees an is-error result;
	//   - interrupt: return ErrApprovalRequired; the run stops as interrupted
	//     until Runtime.Resume decides on the call.
	// Any other error fails the run (policy "hook:BeforeToolCall"). Like
	// AfterToolCall's result, call is valid only during the call.
	BeforeToolCall func(ctx context.Context, call *ToolCallPart) (*ToolResultPart, error)
	// AfterToolCall may edit the result before the model sees it; a
	// changed Content replaces the text of the result's Parts (its images,
	// files and audio stay: set Parts to nil to drop them too). An error
	// fails the run (policy "hook:AfterToolCall"). result is valid only
	// during the call (the run reuses its storage); keep a copy, *result,
	// not the pointer.
	AfterToolCall func(ctx context.Context, call ToolCallPart, result *ToolResultPart) error
}
