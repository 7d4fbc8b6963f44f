package guardrails

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runlet/runlet"
)

// Classification is what a Classifier's model answers.
type Classification struct {
	// Flagged says the text breaks the policy.
	Flagged bool `json:"flagged"`
	// Category names the rule it breaks ("jailbreak", "off_topic"), or is
	// empty.
	Category string `json:"category"`
}

var classificationSchema = runlet.OutputFor[Classification]()

// Classifier returns a guardrail named name that asks model whether the
// run's input breaks policy (a system prompt describing what to flag),
// and trips the run when it does. The call goes through runlet.CallModel
// with name as its purpose, so its tokens and cost show in the run's usage
// under that purpose, and count against its limits. It runs beside the
// agent's first model call (set Blocking on the result to run it before);
// the model's failure, or an answer that is not a Classification, fails
// the guardrail, which fails closed unless OnError says otherwise.
//
// To classify the final answer too, set Output on the result to
// ClassifyText applied to the answer's text.
func Classifier(name string, model runlet.Model, policy string) runlet.Guardrail {
	return runlet.Guardrail{
		Name: name,
		Input: func(ctx context.Context, in runlet.GuardrailInput) (runlet.GuardrailVerdict, error) {
			return ClassifyText(ctx, name, model, policy, in.Text())
		},
	}
}

// ClassifyText asks model whether text breaks policy, as a Classifier
// does, and returns the verdict: a tripwire carrying the Classification
// as Info when it is flagged.
func ClassifyText(ctx context.Context, purpose string, model runlet.Model, policy, text string) (runlet.GuardrailVerdict, error) {
	req := &runlet.ModelRequest{
		Instructions: policy + "\n\nClassify the user's text. Answer with a JSON object {\"flagged\": bool, \"category\": string}; category is empty when not flagged.",
		Messages:     []runlet.Message{runlet.UserText(text)},
		OutputSchema: classificationSchema,
	}
	resp, err := runlet.CallModel(ctx, purpose, model, req)
	if err != nil {
		return runlet.GuardrailVerdict{}, err
	}
	var c Classification
	if err := json.Unmarshal([]byte(strings.TrimSpace(resp.Message.Text())), &c); err != nil {
		return runlet.GuardrailVerdict{}, fmt.Errorf("the classifier's answer is not a classification: %w", err)
	}
	if !c.Flagged {
		return runlet.GuardrailVerdict{}, nil
	}
	return runlet.Tripwire("flagged as "+c.Category, c), nil
}
