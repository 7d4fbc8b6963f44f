// Package guardrails holds ready runlet guardrails: a screen for personal
// data (PII) or any regular expressions, a bound on the input's size, and
// a classifier that asks a model. Give them to an agent (Agent.Guardrails)
// or a run (runlet.WithGuardrails):
//
//	agent.Guardrails = []runlet.Guardrail{
//		guardrails.MaxInputBytes(16 << 10),
//		guardrails.PII(),
//	}
//
// MaxInputBytes and the screens need no model and cost microseconds; a
// Classifier costs a model call, counted in the run's usage under its own
// purpose (Result.UsageByPurpose), and runs beside the agent's first model
// call unless made Blocking.
//
// What they report (the verdict's message and Info, the GuardrailChecked
// event) names the kinds of data found, never the data.
package guardrails
