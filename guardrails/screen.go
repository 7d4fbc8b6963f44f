package guardrails

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/runlet/runlet"
)

// Pattern is a kind of data a screen looks for.
type Pattern struct {
	// Kind names what was found ("email", "card_number"): the verdicts
	// report it, never the match.
	Kind string
	// Re finds candidates.
	Re *regexp.Regexp
	// Valid, if set, confirms a candidate (a checksum), to keep false
	// positives down.
	Valid func(match string) bool
}

// find returns the kinds of patterns found in s, in the patterns' order.
func find(patterns []Pattern, s string) []string {
	var kinds []string
	for _, p := range patterns {
		if slices.Contains(kinds, p.Kind) {
			continue
		}
		for _, m := range p.Re.FindAllString(s, -1) {
			if p.Valid == nil || p.Valid(m) {
				kinds = append(kinds, p.Kind)
				break
			}
		}
	}
	return kinds
}

// Found is the Info of a screen's verdict: the kinds of data it found.
type Found struct {
	Kinds []string `json:"kinds"`
}

// Screen returns a guardrail named name that looks for the patterns in the
// run's input and final answer, where a match trips the run, and in tool
// calls' arguments and results, where a match rejects the call (the model
// is told which kinds of data it may not pass) or replaces the result. To
// screen fewer places, set the returned Guardrail's other fields to nil.
func Screen(name string, patterns ...Pattern) runlet.Guardrail {
	verdict := func(kinds []string, where string, trip bool) runlet.GuardrailVerdict {
		if len(kinds) == 0 {
			return runlet.GuardrailVerdict{}
		}
		msg := fmt.Sprintf("%s contains %s", where, strings.Join(kinds, ", "))
		if trip {
			return runlet.Tripwire(msg, Found{Kinds: kinds})
		}
		v := runlet.RejectCall(msg + ", which may not be passed on; leave it out")
		v.Info = Found{Kinds: kinds}
		return v
	}
	return runlet.Guardrail{
		Name: name,
		Input: func(_ context.Context, in runlet.GuardrailInput) (runlet.GuardrailVerdict, error) {
			return verdict(find(patterns, in.Text()), "the input", true), nil
		},
		Output: func(_ context.Context, out runlet.GuardrailOutput) (runlet.GuardrailVerdict, error) {
			return verdict(find(patterns, out.Text), "the answer", true), nil
		},
		ToolCall: func(_ context.Context, call runlet.ToolCallPart) (runlet.GuardrailVerdict, error) {
			return verdict(find(patterns, string(call.Arguments)), "the call's arguments", false), nil
		},
		ToolResult: func(_ context.Context, _ runlet.ToolCallPart, res runlet.ToolResultPart) (runlet.GuardrailVerdict, error) {
			return verdict(find(patterns, res.Content), "the tool's result", false), nil
		},
	}
}

// PII returns Screen("pii", PIIPatterns()...): email addresses, phone
// numbers, payment card numbers, US social security numbers and IBANs.
func PII() runlet.Guardrail { return Screen("pii", PIIPatterns()...) }

// PIIPatterns returns the patterns PII screens for. Card numbers pass the
// Luhn check and IBANs their mod-97 check before they count.
func PIIPatterns() []Pattern {
	return []Pattern{
		{Kind: "email", Re: emailRe},
		{Kind: "phone", Re: phoneRe},
		{Kind: "card_number", Re: cardRe, Valid: luhn},
		{Kind: "us_ssn", Re: ssnRe, Valid: ssn},
		{Kind: "iban", Re: ibanRe, Valid: iban},
	}
}

var (
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	// International numbers with a + and North American ones.
	phoneRe = regexp.MustCompile(`\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,3}\b|\(?\b\d{3}\)?[ .-]\d{3}[ .-]\d{4}\b`)
	cardRe  = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)
	ssnRe   = regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)
	ibanRe  = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b`)
)

// luhn reports whether the digits of s pass the Luhn checksum.
func luhn(s string) bool {
	sum, n, double := 0, 0, false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum, n, double = sum+d, n+1, !double
	}
	return n >= 13 && sum%10 == 0
}

// ssn leaves out numbers the SSA never issues.
func ssn(s string) bool {
	area, group, serial := s[:3], s[4:6], s[7:]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

// iban reports whether s passes the IBAN mod-97 check.
func iban(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// MaxInputBytes returns a guardrail that trips when the run's input text
// is longer than n bytes. It is Blocking: it costs nothing, and a long
// input is refused before any token is spent on it.
func MaxInputBytes(n int) runlet.Guardrail {
	return runlet.Guardrail{
		Name:     "max_input_bytes",
		Blocking: true,
		Input: func(_ context.Context, in runlet.GuardrailInput) (runlet.GuardrailVerdict, error) {
			size := 0
			for _, m := range in.Input {
				size += len(m.Text())
			}
			if size > n {
				return runlet.Tripwire(fmt.Sprintf("the input is %d bytes, over the limit of %d", size, n), map[string]int{"bytes": size, "limit": n}), nil
			}
			return runlet.GuardrailVerdict{}, nil
		},
	}
}
