package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// eval evaluates an arithmetic expression: numbers (1, 2.5, 1e3),
// + - * / % (remainder) ^ (power, right-associative), unary minus,
// parentheses, the functions sqrt abs round floor ceil ln log (base 10) exp
// sin cos tan, and the constants pi and e. It is the calculator tool's
// engine.
func eval(expr string) (float64, error) {
	if len(expr) > 1000 {
		return 0, errors.New("expression too long (1000 characters at most)")
	}
	p := &calc{s: expr}
	v, err := p.expr(0)
	if err != nil {
		return 0, err
	}
	p.space()
	if p.i < len(p.s) {
		return 0, fmt.Errorf("unexpected %q at position %d", p.s[p.i:p.i+1], p.i+1)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("the result is not a finite number")
	}
	return v, nil
}

type calc struct {
	s string
	i int
}

func (p *calc) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *calc) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// expr parses a sum: term {(+|-) term}.
func (p *calc) expr(depth int) (float64, error) {
	if depth > 100 {
		return 0, errors.New("expression nested too deeply")
	}
	v, err := p.term(depth)
	for err == nil {
		switch p.peek() {
		case '+':
			p.i++
			var r float64
			r, err = p.term(depth)
			v += r
		case '-':
			p.i++
			var r float64
			r, err = p.term(depth)
			v -= r
		default:
			return v, nil
		}
	}
	return 0, err
}

// term parses a product: unary {(*|/|%) unary}.
func (p *calc) term(depth int) (float64, error) {
	v, err := p.unary(depth)
	for err == nil {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			return v, nil
		}
		p.i++
		var r float64
		if r, err = p.unary(depth); err != nil {
			break
		}
		switch op {
		case '*':
			v *= r
		case '/', '%':
			if r == 0 {
				return 0, errors.New("division by zero")
			}
			if op == '/' {
				v /= r
			} else {
				v = math.Mod(v, r)
			}
		}
	}
	return 0, err
}

// unary parses {-|+} power; minus binds looser than ^, so -2^2 is -4.
func (p *calc) unary(depth int) (float64, error) {
	switch p.peek() {
	case '-':
		p.i++
		v, err := p.unary(depth + 1)
		return -v, err
	case '+':
		p.i++
		return p.unary(depth + 1)
	}
	return p.power(depth)
}

// power parses primary [^ unary] (right-associative: 2^3^2 is 2^9).
func (p *calc) power(depth int) (float64, error) {
	v, err := p.primary(depth)
	if err != nil {
		return 0, err
	}
	if p.peek() == '^' {
		p.i++
		e, err := p.unary(depth + 1)
		if err != nil {
			return 0, err
		}
		return math.Pow(v, e), nil
	}
	return v, nil
}

var funcs = map[string]func(float64) float64{
	"sqrt": math.Sqrt, "abs": math.Abs, "round": math.Round, "floor": math.Floor, "ceil": math.Ceil,
	"ln": math.Log, "log": math.Log10, "exp": math.Exp, "sin": math.Sin, "cos": math.Cos, "tan": math.Tan,
}

func (p *calc) primary(depth int) (float64, error) {
	c := p.peek()
	switch {
	case c == '(':
		return p.parens(depth)
	case c >= '0' && c <= '9' || c == '.':
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.' || p.s[p.i] == '_') {
			p.i++
		}
		if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
			j := p.i + 1
			if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
				j++
			}
			if j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
				p.i = j
				for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
					p.i++
				}
			}
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(p.s[start:p.i], "_", ""), 64)
		if err != nil {
			return 0, fmt.Errorf("bad number %q", p.s[start:p.i])
		}
		return v, nil
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		start := p.i
		for p.i < len(p.s) && (p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= 'A' && p.s[p.i] <= 'Z' || p.s[p.i] >= '0' && p.s[p.i] <= '9') {
			p.i++
		}
		name := strings.ToLower(p.s[start:p.i])
		switch name {
		case "pi":
			return math.Pi, nil
		case "e":
			return math.E, nil
		}
		f, ok := funcs[name]
		if !ok {
			return 0, fmt.Errorf("unknown name %q", name)
		}
		if p.peek() != '(' {
			return 0, fmt.Errorf("%s needs an argument in parentheses, such as %s(2)", name, name)
		}
		v, err := p.parens(depth)
		return f(v), err
	case c == 0:
		return 0, errors.New("unexpected end of expression")
	}
	return 0, fmt.Errorf("unexpected %q at position %d", string(c), p.i+1)
}

// parens reads a parenthesized expression, the '(' at p.i.
func (p *calc) parens(depth int) (float64, error) {
	p.i++
	v, err := p.expr(depth + 1)
	if err != nil {
		return 0, err
	}
	if p.peek() != ')' {
		return 0, fmt.Errorf("missing ) at position %d", p.i+1)
	}
	p.i++
	return v, nil
}
