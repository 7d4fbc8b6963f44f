package config

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/runlet/runlet"
)

// builtins are the tools every config may name. They are safe: they read
// the clock or compute, and touch nothing else.
var builtins = Registry{
	"current_time": CurrentTime(),
	"calculator":   Calculator(),
}

// Builtins returns the built-in tools a config may name without Go code:
// current_time and calculator.
func Builtins() Registry {
	r := make(Registry, len(builtins))
	for k, v := range builtins {
		r[k] = v
	}
	return r
}

// timeArgs are current_time's arguments.
type timeArgs struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"IANA time zone such as Europe/London or Asia/Shanghai; the local time zone if empty"`
}

// CurrentTime returns the current_time tool: the current date and time
// (RFC 3339, with the weekday), in a time zone the model may name.
func CurrentTime() runlet.Tool {
	return runlet.NewTool("current_time", "Returns the current date and time, optionally in a given IANA time zone.",
		func(_ context.Context, in timeArgs) (string, error) {
			now := time.Now()
			if in.Timezone != "" {
				loc, err := time.LoadLocation(in.Timezone)
				if err != nil {
					return "", fmt.Errorf("unknown time zone %q; use an IANA name such as Europe/London", in.Timezone)
				}
				now = now.In(loc)
			}
			zone := now.Location().String()
			if abbr, _ := now.Zone(); zone == "Local" {
				zone = abbr
			} else if abbr != zone {
				zone += " " + abbr
			}
			return now.Format(time.RFC3339) + " (" + now.Weekday().String() + ", " + zone + ")", nil
		})
}

// calcArgs are calculator's arguments.
type calcArgs struct {
	Expression string `json:"expression" jsonschema:"arithmetic expression, such as (2 + 3) * 4 ^ 2 / 7 or sqrt(2); operators + - * / % ^, functions sqrt abs round floor ceil ln log exp sin cos tan, constants pi e"`
}

// Calculator returns the calculator tool: it evaluates an arithmetic
// expression (numbers, + - * / % ^, parentheses, a few functions and
// constants) with float64 precision. Models are poor at arithmetic; this
// tool is exact enough for everyday sums.
func Calculator() runlet.Tool {
	return runlet.NewTool("calculator", "Evaluates an arithmetic expression and returns the result.",
		func(_ context.Context, in calcArgs) (string, error) {
			v, err := eval(in.Expression)
			if err != nil {
				return "", err
			}
			return strconv.FormatFloat(v, 'g', -1, 64), nil
		})
}

// policyTool is a tool with a policy set by the config (timeout, approval).
type policyTool struct {
	runlet.Tool
	policy runlet.ToolPolicy
}

var _ runlet.PolicyTool = policyTool{}

func (t policyTool) Policy() runlet.ToolPolicy { return t.policy }

var _ runlet.PartsTool = policyTool{}

// CallParts passes the wrapped tool's parts on (an MCP tool's images, say),
// which Call alone would reduce to text.
func (t policyTool) CallParts(ctx context.Context, args json.RawMessage) (runlet.ToolOutput, error) {
	return runlet.CallParts(ctx, t.Tool, args)
}

// withPolicy wraps t with ref's timeout and approval, on top of the
// tool's own policy.
func withPolicy(t runlet.Tool, ref ToolRef) runlet.Tool {
	p := runlet.PolicyOf(t)
	if ref.Timeout > 0 {
		p.Timeout = ref.Timeout
	}
	p.RequiresApproval = p.RequiresApproval || ref.RequireApproval
	return policyTool{Tool: t, policy: p}
}
