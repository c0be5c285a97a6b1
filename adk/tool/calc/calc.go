// Package calc evaluates arithmetic expressions, and is a tool that does:
// numbers, + - * / % and ^ (power, right-associative), unary signs,
// parentheses, the constants pi and e, and the functions abs, sqrt, cbrt,
// exp, ln (log), log10, log2, sin, cos, tan, asin, acos, atan, floor, ceil,
// round, min, max, pow and hypot.
//
// % between two operands is the remainder (10 % 4 is 2). After an operand
// and before anything that cannot start one (the end, an operator, a
// closing parenthesis, a comma, "of") it is a percentage: 15% is 0.15, and
// "15% of 80" is 15% times 80, as tightly bound as *.
package calc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/a2amesh/a2amesh/adk/tool"
)

// MaxLength bounds an expression; MaxDepth its nesting.
const (
	MaxLength = 4096
	MaxDepth  = 200
)

// SyntaxError says where an expression stops making sense.
type SyntaxError struct {
	Pos int // byte offset
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("at %d: %s", e.Pos, e.Msg) }

// Eval evaluates expr.
func Eval(expr string) (float64, error) {
	if len(expr) > MaxLength {
		return 0, fmt.Errorf("calc: the expression is longer than %d bytes", MaxLength)
	}
	p := &parser{src: expr}
	p.next()
	v, err := p.expr(0)
	if err != nil {
		return 0, fmt.Errorf("calc: %w", err)
	}
	if p.tok.kind != tokEOF {
		return 0, fmt.Errorf("calc: %w", p.fail("unexpected %q", p.tok.text))
	}
	if math.IsNaN(v) {
		return 0, errors.New("calc: the result is not a number")
	}
	return v, nil
}

// Format renders a result the way a person writes it.
func Format(v float64) string {
	if math.IsInf(v, 0) {
		if v > 0 {
			return "infinity"
		}
		return "-infinity"
	}
	return strconv.FormatFloat(v, 'g', 12, 64)
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp // one of + - * / % ^ ( ) ,
)

type token struct {
	kind tokKind
	text string
	num  float64
	pos  int
}

type parser struct {
	src   string
	pos   int
	tok   token
	err   error
	depth int
}

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Pos: p.tok.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) next() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = token{kind: tokEOF, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		end := p.pos
		for end < len(p.src) && (p.src[end] >= '0' && p.src[end] <= '9' || p.src[end] == '.' || p.src[end] == '_') {
			end++
		}
		if end < len(p.src) && (p.src[end] == 'e' || p.src[end] == 'E') {
			e := end + 1
			if e < len(p.src) && (p.src[e] == '+' || p.src[e] == '-') {
				e++
			}
			if e < len(p.src) && p.src[e] >= '0' && p.src[e] <= '9' {
				for e < len(p.src) && p.src[e] >= '0' && p.src[e] <= '9' {
					e++
				}
				end = e
			}
		}
		text := p.src[p.pos:end]
		v, err := strconv.ParseFloat(strings.ReplaceAll(text, "_", ""), 64)
		if err != nil {
			p.tok = token{kind: tokOp, text: text, pos: start}
			p.err = &SyntaxError{Pos: start, Msg: fmt.Sprintf("%q is not a number", text)}
			p.pos = end
			return
		}
		p.tok, p.pos = token{kind: tokNum, text: text, num: v, pos: start}, end
	case c == '_' || c < 0x80 && unicode.IsLetter(rune(c)):
		end := p.pos
		for end < len(p.src) && (p.src[end] == '_' || p.src[end] < 0x80 && (unicode.IsLetter(rune(p.src[end])) || unicode.IsDigit(rune(p.src[end])))) {
			end++
		}
		p.tok, p.pos = token{kind: tokIdent, text: strings.ToLower(p.src[p.pos:end]), pos: start}, end
	case strings.IndexByte("+-*/%^(),", c) >= 0:
		p.tok, p.pos = token{kind: tokOp, text: string(c), pos: start}, p.pos+1
	case c == 0xc3 && p.pos+1 < len(p.src) && (p.src[p.pos+1] == 0x97 || p.src[p.pos+1] == 0xb7): // × ÷
		op := "*"
		if p.src[p.pos+1] == 0xb7 {
			op = "/"
		}
		p.tok, p.pos = token{kind: tokOp, text: op, pos: start}, p.pos+2
	default:
		p.tok = token{kind: tokOp, text: string(c), pos: start}
		p.err = &SyntaxError{Pos: start, Msg: fmt.Sprintf("unexpected %q", string(c))}
		p.pos++
	}
}

// Binding powers of the binary operators.
func binding(op string) (left, right int) {
	switch op {
	case "+", "-":
		return 10, 11
	case "*", "/", "%":
		return 20, 21
	case "^":
		return 31, 30 // right-associative
	}
	return -1, -1
}

// expr parses a chain of binary operators binding tighter than minBP.
func (p *parser) expr(minBP int) (float64, error) {
	if p.depth++; p.depth > MaxDepth {
		return 0, p.fail("the expression nests more than %d deep", MaxDepth)
	}
	defer func() { p.depth-- }()
	lhs, err := p.unary()
	if err != nil {
		return 0, err
	}
	for {
		if p.err != nil {
			return 0, p.err
		}
		if p.tok.kind != tokOp {
			return lhs, nil
		}
		op := p.tok.text
		l, r := binding(op)
		if l < 0 || l < minBP {
			return lhs, nil
		}
		p.next()
		rhs, err := p.expr(r)
		if err != nil {
			return 0, err
		}
		switch op {
		case "+":
			lhs += rhs
		case "-":
			lhs -= rhs
		case "*":
			lhs *= rhs
		case "/":
			if rhs == 0 {
				return 0, errors.New("division by zero")
			}
			lhs /= rhs
		case "%":
			if rhs == 0 {
				return 0, errors.New("division by zero")
			}
			lhs = math.Mod(lhs, rhs)
		case "^":
			lhs = math.Pow(lhs, rhs)
		}
	}
}

// unary parses signs, then a primary.
func (p *parser) unary() (float64, error) {
	if p.err != nil {
		return 0, p.err
	}
	if p.tok.kind == tokOp && (p.tok.text == "-" || p.tok.text == "+") {
		neg := p.tok.text == "-"
		p.next()
		// -2^2 is -(2^2), as in mathematics.
		v, err := p.expr(30)
		if neg {
			v = -v
		}
		return v, err
	}
	return p.primary()
}

// primary parses an operand: a number, a parenthesized expression, a
// call or a constant, and a percent sign after it.
func (p *parser) primary() (float64, error) {
	v, err := p.operand()
	if err != nil || p.err != nil || p.tok.kind != tokOp || p.tok.text != "%" {
		return v, err
	}
	switch after := p.peek(); {
	case after.kind == tokNum, after.kind == tokOp && after.text == "(",
		after.kind == tokIdent && after.text != "of":
		return v, nil // a remainder: the binary operator
	case after.kind == tokIdent: // x% of y
		p.next()
		p.next()
		_, right := binding("*")
		rhs, err := p.expr(right)
		if err != nil {
			return 0, err
		}
		return v / 100 * rhs, nil
	}
	p.next()
	return v / 100, nil
}

// peek returns the token after the current one.
func (p *parser) peek() token {
	pos, tok, err := p.pos, p.tok, p.err
	p.next()
	after := p.tok
	p.pos, p.tok, p.err = pos, tok, err
	return after
}

func (p *parser) operand() (float64, error) {
	if p.err != nil {
		return 0, p.err
	}
	t := p.tok
	switch {
	case t.kind == tokNum:
		p.next()
		return t.num, nil
	case t.kind == tokOp && t.text == "(":
		p.next()
		v, err := p.expr(0)
		if err != nil {
			return 0, err
		}
		if p.tok.kind != tokOp || p.tok.text != ")" {
			return 0, p.fail("missing )")
		}
		p.next()
		return v, nil
	case t.kind == tokIdent:
		p.next()
		if p.tok.kind == tokOp && p.tok.text == "(" {
			p.next()
			var args []float64
			if !(p.tok.kind == tokOp && p.tok.text == ")") {
				for {
					v, err := p.expr(0)
					if err != nil {
						return 0, err
					}
					args = append(args, v)
					if p.tok.kind == tokOp && p.tok.text == "," {
						p.next()
						continue
					}
					break
				}
			}
			if p.tok.kind != tokOp || p.tok.text != ")" {
				return 0, p.fail("missing ) after the arguments of %s", t.text)
			}
			p.next()
			return call(t, args)
		}
		switch t.text {
		case "pi", "π":
			return math.Pi, nil
		case "e":
			return math.E, nil
		}
		return 0, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("unknown name %q", t.text)}
	case t.kind == tokEOF:
		return 0, p.fail("the expression ends too early")
	}
	return 0, p.fail("unexpected %q", t.text)
}

var unaryFuncs = map[string]func(float64) float64{
	"abs": math.Abs, "sqrt": math.Sqrt, "cbrt": math.Cbrt, "exp": math.Exp,
	"ln": math.Log, "log": math.Log, "log10": math.Log10, "log2": math.Log2,
	"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "asin": math.Asin, "acos": math.Acos, "atan": math.Atan,
	"floor": math.Floor, "ceil": math.Ceil, "round": math.Round,
}

func call(t token, args []float64) (float64, error) {
	if f, ok := unaryFuncs[t.text]; ok {
		if len(args) != 1 {
			return 0, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("%s takes 1 argument, not %d", t.text, len(args))}
		}
		return f(args[0]), nil
	}
	switch t.text {
	case "min", "max":
		if len(args) == 0 {
			return 0, &SyntaxError{Pos: t.pos, Msg: t.text + " needs arguments"}
		}
		v := args[0]
		for _, a := range args[1:] {
			if t.text == "min" {
				v = math.Min(v, a)
			} else {
				v = math.Max(v, a)
			}
		}
		return v, nil
	case "pow", "hypot":
		if len(args) != 2 {
			return 0, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("%s takes 2 arguments, not %d", t.text, len(args))}
		}
		if t.text == "pow" {
			return math.Pow(args[0], args[1]), nil
		}
		return math.Hypot(args[0], args[1]), nil
	}
	return 0, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("unknown function %q", t.text)}
}

// Input is the calculate tool's argument.
type Input struct {
	Expression string `json:"expression" desc:"an arithmetic expression, e.g. (17 + 25) * 3 or sqrt(2) ^ 2"`
}

// Tool returns the calculate tool: it evaluates an expression, and answers
// a bad one with what is wrong and where.
func Tool() tool.Tool {
	t, err := tool.FromFunc("calculate", "Evaluate an arithmetic expression exactly: + - * / ^, % (remainder, or after a number a percentage: 15% of 80), parentheses, sqrt, sin, log, min, max, pi, e ...",
		func(_ context.Context, in Input) (string, error) {
			v, err := Eval(in.Expression)
			if err != nil {
				return "", err
			}
			return in.Expression + " = " + Format(v), nil
		})
	if err != nil {
		panic(err) // the argument type is fixed and valid
	}
	return t
}
