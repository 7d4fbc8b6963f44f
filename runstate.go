package runlet

import (
	"context"
	"sync"
	"sync/atomic"
)

// run is one execution of the state machine. Run, Stream, Resume and
// ResumeStream all drive the same run.start; they differ only in whether
// events are yielded to a caller and whether the model is streamed.
//
// Its state is split by concern into the parts below, embedded by value so
// that a run stays one allocation and their fields read as the run's own.
type run struct {
	rt    *Runtime
	agent *Agent // the current agent: a handoff replaces it
	input string // the run's text input, if any
	cfg   runConfig
	state RunState
	out   *outputState // nil without an output schema

	result *Result // set by every end of the run
	err    error   // why the run failed, nil if it did not

	runContext
	runEvents
	runNesting
	runResume
	runHistory
	runSetup
	runAccounting
	runToolState
	runGuard
}

// runContext is the run's context and the RunInfo it carries. The top
// run's RunInfo and context live in the run itself, so a run costs one
// allocation rather than one for each.
type runContext struct {
	ctx     context.Context // set once by start: the run's, carrying its RunInfo
	cancel  context.CancelFunc
	info    *RunInfo   // &ownInfo
	infoMu  sync.Mutex // RunInfo.mu of ownInfo
	ownInfo RunInfo
	ownCtx  runCtx
}

// runEvents is where the run's events go.
type runEvents struct {
	yield   func(Event, error) bool // nil for Run/Resume; the sink's
	sink    *sink                   // where events go, shared with nested agents
	ownSink sink                    // the top run's, which sink points at
	watched bool                    // someone sees events: a Stream consumer or observers
	seq     int64                   // events this agent emitted
}

// runNesting places an agent called as a tool (see AsTool), which runs as a
// run nested in its caller's.
type runNesting struct {
	parent *run   // the caller; nil for the top run
	depth  int    // its place in the tree (see EventHeader)
	path   string // likewise
	// paused is the nested run's checkpoint when it was interrupted, which
	// the caller keeps in its own.
	paused *Checkpoint
	// pausedCalls are the paused nested calls of the current turn, by call
	// ID.
	pausedCalls map[string]*Checkpoint
}

// runResume is what a resumed run continues from.
type runResume struct {
	resuming bool
	decided  []Decision      // the decisions the run was resumed with
	approved map[string]bool // calls a human approved on resume
	rejected map[string]bool // calls a human rejected on resume
	from     *Checkpoint     // the checkpoint a nested agent resumes from
	// nested holds, while resuming, the checkpoints of the calls that ran
	// interrupted agents, and nestedDec the decisions that go to each.
	nested    map[string]*Checkpoint
	nestedDec map[string][]Decision
}

// runHistory is the conversation: what came before the run, what it added
// and what of that the session store holds.
type runHistory struct {
	history    []Message // before this run
	sessionLen int       // session messages the run started after
	added      []Message // this run's messages
	committed  int       // how many of added are in the session store
	// next is the handoff the model chose this turn.
	next *Handoff
	// After a handoff with a Filter, view replaces the conversation before
	// added[viewAt:]; filtered says one did.
	view     []Message
	viewAt   int
	filtered bool
}

// runSetup is what setup resolves from the agent, the Runtime and the run
// options.
type runSetup struct {
	scope                // the run's observers, hooks, preparers and tool limits over the Runtime's
	maxTurns int         // resolved: run, else agent, else Runtime
	limits   UsageLimits // resolved: run, else Runtime
	options  map[string]any
	settings Settings
}

// runAccounting is what the run spent.
type runAccounting struct {
	usage     Usage   // this agent's own
	cost      Cost    // this agent's own
	ledger    *ledger // the whole run's, shared with nested agents
	ownLedger ledger  // the top run's, which ledger points at
	limitHit  string  // policy of the usage limit a preparer's call hit
}

// runToolState is the run's tools and the state of their calls.
type runToolState struct {
	tools []Tool     // the run's tools, specs[i] describing tools[i]
	specs []ToolSpec // in the order the model is shown them
	// toolIndex finds a tool by name when there are many (see toolAt)
	toolIndex map[string]int
	// toolsLoaded says tools are current for the next model call.
	toolsLoaded bool
	// calledTools says the current agent has called a tool in the run,
	// which ends a forced tool choice (see Agent.ToolChoice).
	calledTools bool

	// buffers for a turn's tool calls, reused by the next turn (see
	// turnResults)
	turnResultBuf [turnCalls]ToolResultPart
	turnInvokes   [turnCalls]invocation
	turnCallBuf   [turnCalls]ToolCallPart
	turnRunnable  [turnCalls]int
	// wait is where a call running alone leaves its result (see callTool);
	// waitLost says a tool was abandoned, after which wait is not used
	// again.
	wait     toolWait
	waitLost bool
	// abandoned counts tools abandoned after their timeout that have not
	// returned yet (see callTool); at the bound, calls are answered without
	// running.
	abandoned atomic.Int32
}
