package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/runlet/runlet"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Start starts a durable run of in.Agent on the worker's task queue given
// in opts.
func Start(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, in RunInput) (client.WorkflowRun, error) {
	return c.ExecuteWorkflow(ctx, opts, WorkflowName, in)
}

// Wait waits for a run to end and returns its Result. Like Runtime.Run, a
// failed run returns its error and, when the workflow recorded one, the
// partial Result; a run stopped by a policy returns a *runlet.PolicyError
// (errors.Is it with runlet.ErrMaxTurns or runlet.ErrUsageLimit).
//
// A run on workers with a payload store (Config.Payloads) returns its
// large tool results as stand-ins; given that store, Wait reads them back
// into Result.Messages (checked against their SHA-256), else it leaves the
// stand-ins, whose Content says where each result is.
func Wait(ctx context.Context, run client.WorkflowRun, payloads ...PayloadStore) (*runlet.Result, error) {
	var store PayloadStore
	if len(payloads) > 0 {
		store = payloads[0]
	}
	var wr workflowResult
	err := run.Get(ctx, &wr)
	if err == nil {
		return readBack(ctx, store, &wr.Result, wr.Refs)
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return nil, err
	}
	var fd failureDetails
	if app.Details(&fd) != nil {
		return nil, err
	}
	if fd.Policy != "" {
		cause := errors.New(app.Message())
		switch {
		case fd.Policy == "max_turns":
			cause = &wrapped{msg: app.Message(), err: runlet.ErrMaxTurns}
		case strings.HasPrefix(fd.Policy, "usage_limit:"):
			cause = &wrapped{msg: app.Message(), err: runlet.ErrUsageLimit}
		case strings.HasPrefix(fd.Policy, "guardrail:"):
			cause = &wrapped{msg: app.Message(), err: runlet.ErrGuardrailTripped}
		}
		err = &runlet.PolicyError{Policy: fd.Policy, Err: cause}
	}
	switch app.Type() {
	case ErrTypeOutput:
		if fd.Output != nil {
			err = fd.Output
		}
	case ErrTypeRefusal:
		err = &runlet.RefusalError{Text: fd.Refusal}
	}
	if fd.Result != nil && store != nil {
		if _, rerr := readBack(ctx, store, fd.Result, fd.Refs); rerr != nil {
			return fd.Result, errors.Join(err, rerr)
		}
	}
	return fd.Result, err
}

// readBack puts the parts refs name back into res.Messages, from store
// (when there is one).
func readBack(ctx context.Context, store PayloadStore, res *runlet.Result, refs []PartRef) (*runlet.Result, error) {
	if len(refs) == 0 || store == nil {
		return res, nil
	}
	msgs, err := resolve(ctx, store, res.Messages, refs)
	if err != nil {
		return res, err
	}
	res.Messages = msgs
	return res, nil
}

// StartAs starts a durable run whose final answer is a T, as runlet.RunAs
// runs one in process: unless in.Output is set, it asks for the schema
// inferred from T (runlet.OutputFor). The worker checks each answer
// against it and sends an invalid one back to the model with what is
// wrong, up to in.OutputRetries times (see the package doc, "Typed
// output"). WaitAs returns the answer decoded.
func StartAs[T any](ctx context.Context, c client.Client, opts client.StartWorkflowOptions, in RunInput) (run client.WorkflowRun, err error) {
	if in.Output == nil {
		func() {
			defer func() {
				if v := recover(); v != nil { // OutputFor panics on a type without a schema
					err = fmt.Errorf("runlet/temporal: output schema of %T: %v", *new(T), v)
				}
			}()
			in.Output = runlet.OutputFor[T]()
		}()
		if err != nil {
			return nil, err
		}
	}
	return Start(ctx, c, opts, in)
}

// WaitAs is Wait for a run started with StartAs (or of an agent with an
// OutputSchema): it decodes the answer, Result.Output, into T. A run whose
// answer still failed the schema after the last repair returns a
// *runlet.OutputError, a refusal a *runlet.RefusalError, with the partial
// Result, as runlet.RunAs does.
func WaitAs[T any](ctx context.Context, run client.WorkflowRun, payloads ...PayloadStore) (*runlet.TypedResult[T], error) {
	out := new(runlet.TypedResult[T])
	res, err := Wait(ctx, run, payloads...)
	out.Result = res
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal([]byte(res.Output), &out.Value); err != nil {
		return out, fmt.Errorf("runlet/temporal: the answer does not decode into %T: %w", out.Value, err)
	}
	return out, nil
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// Decide delivers the decisions on a waiting run's pending calls, one per
// call, through the runlet.decide update. It fails, changing nothing, when
// the run is not waiting or the decisions do not match its pending calls.
func Decide(ctx context.Context, c client.Client, workflowID string, decisions ...runlet.Decision) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   DecideUpdate,
		Args:         []any{decisions},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

// Pending returns the calls a run waits for decisions on (none when it is
// not waiting).
func Pending(ctx context.Context, c client.Client, workflowID string) ([]runlet.ToolCallPart, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, "", PendingQuery)
	if err != nil {
		return nil, err
	}
	var calls []runlet.ToolCallPart
	return calls, v.Get(&calls)
}

// GetProgress returns a run's progress: state, turn, usage, pending calls.
func GetProgress(ctx context.Context, c client.Client, workflowID string) (Progress, error) {
	var p Progress
	v, err := c.QueryWorkflow(ctx, workflowID, "", ProgressQuery)
	if err != nil {
		return p, err
	}
	return p, v.Get(&p)
}

// IdempotencyKey returns, inside a tool called by the tool activity, a key
// that is the same for every attempt of this call and differs for every
// other call of every run: the workflow ID, its run ID and the activity ID.
// A tool with side effects passes it on (an Idempotency-Key header, a
// unique column) so that an attempt repeated after a crash does nothing
// twice. Outside an activity it returns "".
func IdempotencyKey(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	info := activity.GetInfo(ctx)
	return info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID + "/" + info.ActivityID
}
