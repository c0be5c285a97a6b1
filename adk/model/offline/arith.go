package offline

import (
	"regexp"
	"strconv"
	"strings"
)

// Arithmetic in words: numbers spelled out become digits, and the words
// people write arithmetic with become the symbols of an expression, so
// that "what is seven times eight" reads "what is 7 * 8" and "12 percent
// of 250" reads "12% of 250" (an expression evaluator that takes % after
// a number as a percentage, like adk/tool/calc, evaluates it).

// numberWord is a number spelled out, and what kind of word it is.
type numberWord struct {
	value int64
	kind  int
}

// The kinds of number words, by the words that may follow them.
const (
	unitWord    = iota // zero to nine
	teenWord           // ten to nineteen
	tensWord           // twenty, thirty ... ninety
	hundredWord        // hundred
	scaleWord          // thousand, million, billion
)

var numberWords = func() map[string]numberWord {
	m := map[string]numberWord{}
	for i, w := range strings.Fields("zero one two three four five six seven eight nine") {
		m[w] = numberWord{int64(i), unitWord}
	}
	for i, w := range strings.Fields("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen") {
		m[w] = numberWord{int64(10 + i), teenWord}
	}
	for i, w := range strings.Fields("twenty thirty forty fifty sixty seventy eighty ninety") {
		m[w] = numberWord{int64(20 + 10*i), tensWord}
	}
	m["hundred"] = numberWord{100, hundredWord}
	m["thousand"] = numberWord{1e3, scaleWord}
	m["million"] = numberWord{1e6, scaleWord}
	m["billion"] = numberWord{1e9, scaleWord}
	return m
}()

// follows reports whether a number word of kind next may follow one of
// kind prev in one number ("twenty five", "two hundred and six", not "two
// five").
func follows(prev, next int) bool {
	switch prev {
	case unitWord, teenWord:
		return next == hundredWord || next == scaleWord
	case tensWord:
		return next == unitWord || next == hundredWord || next == scaleWord
	case hundredWord:
		return next != hundredWord
	default: // a scale
		return next == unitWord || next == teenWord || next == tensWord
	}
}

var letterRunRe = regexp.MustCompile(`[A-Za-z]+`)

// spellNumbers replaces the numbers text spells out with their digits:
// "twenty-five" is 25, "a hundred and six" 106, "two thousand" 2000.
func spellNumbers(text string) string {
	idx := letterRunRe.FindAllStringIndex(text, -1)
	var b strings.Builder
	last := 0 // end of what b holds of text
	for i := 0; i < len(idx); i++ {
		start := idx[i][0]
		first := strings.ToLower(text[idx[i][0]:idx[i][1]])
		if first == "a" && i+1 < len(idx) && gapOK(text[idx[i][1]:idx[i+1][0]]) {
			// "a hundred", "a thousand"
			if next := strings.ToLower(text[idx[i+1][0]:idx[i+1][1]]); numberWords[next].kind >= hundredWord {
				i++
				first = next
			}
		}
		nw, ok := numberWords[first]
		if !ok {
			continue
		}
		var total, cur int64
		add := func(nw numberWord) {
			switch nw.kind {
			case hundredWord:
				cur = max(cur, 1) * 100
			case scaleWord:
				total += max(cur, 1) * nw.value
				cur = 0
			default:
				cur += nw.value
			}
		}
		add(nw)
		kind, end := nw.kind, idx[i][1]
		for j := i + 1; j < len(idx) && nw.value != 0; j++ { // zero stands alone
			if !gapOK(text[idx[j-1][1]:idx[j][0]]) {
				break
			}
			w := strings.ToLower(text[idx[j][0]:idx[j][1]])
			if w == "and" && (kind == hundredWord || kind == scaleWord) && j+1 < len(idx) && gapOK(text[idx[j][1]:idx[j+1][0]]) {
				next, ok := numberWords[strings.ToLower(text[idx[j+1][0]:idx[j+1][1]])]
				if !ok || !follows(kind, next.kind) || next.kind >= hundredWord {
					break
				}
				j++
				w = strings.ToLower(text[idx[j][0]:idx[j][1]])
			}
			next, ok := numberWords[w]
			if !ok || next.value == 0 || !follows(kind, next.kind) {
				break
			}
			add(next)
			kind, end, i = next.kind, idx[j][1], j
		}
		b.WriteString(text[last:start])
		b.WriteString(strconv.FormatInt(total+cur, 10))
		last = end
	}
	b.WriteString(text[last:])
	return b.String()
}

// gapOK reports whether the text between two words keeps them in one
// spelled-out number: a space or a hyphen.
func gapOK(gap string) bool {
	return gap == " " || gap == "-"
}

// The phrases of arithmetic in words, rewritten in order.
var (
	// An operand: a number or a parenthesized expression.
	operand = `(\d+(?:\.\d+)?|\([^()]*\))`
	// The end of a left operand and the start of a right one, for the
	// words between operands.
	leftEnd    = `([\d)%])\s*`
	rightStart = `\s*(\d|\.\d|\(|-\s*\d|sqrt\b|cbrt\b|pi\b)`

	arithPhrases = []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`(?i)\b(?:square\s+root|sqrt)\s+of\s+` + operand), `sqrt($1)`},
		{regexp.MustCompile(`(?i)\bcube\s+root\s+of\s+` + operand), `cbrt($1)`},
		{regexp.MustCompile(`(?i)\bdivide\s+` + operand + `\s+by\s+` + operand), `$1 / $2`},
		{regexp.MustCompile(`(?i)\bmultiply\s+` + operand + `\s+(?:by|and|with|times)\s+` + operand), `$1 * $2`},
		{regexp.MustCompile(`(?i)\badd\s+` + operand + `\s+(?:and|to|plus)\s+` + operand), `$1 + $2`},
		{regexp.MustCompile(`(?i)\bsubtract\s+` + operand + `\s+from\s+` + operand), `$2 - $1`},
		{regexp.MustCompile(`(?i)\bsum\s+of\s+` + operand + `\s+and\s+` + operand), `$1 + $2`},
		{regexp.MustCompile(`(?i)\bproduct\s+of\s+` + operand + `\s+and\s+` + operand), `$1 * $2`},
		{regexp.MustCompile(`(?i)\bdifference\s+(?:between|of)\s+` + operand + `\s+and\s+` + operand), `$1 - $2`},
		{regexp.MustCompile(`(?i)\bquotient\s+of\s+` + operand + `\s+and\s+` + operand), `$1 / $2`},
		{regexp.MustCompile(`(?i)` + operand + `\s+squared\b`), `$1 ^ 2`},
		{regexp.MustCompile(`(?i)` + operand + `\s+cubed\b`), `$1 ^ 3`},
		{regexp.MustCompile(`(?i)` + leftEnd + `to\s+the\s+(\d+)(?:st|nd|rd|th)(?:\s+power)?\b`), `$1 ^ $2`},
		{regexp.MustCompile(`(?i)([\d)])\s*(?:per\s*cent|percent|pct)\b`), `$1%`},
	}
	// The words between two operands, and their operators.
	arithInfix = []struct {
		re *regexp.Regexp
		op string
	}{
		{regexp.MustCompile(`(?i)` + leftEnd + `(?:(?:raised\s+)?to\s+the\s+power(?:\s+of)?|raised\s+to)` + rightStart), "^"},
		{regexp.MustCompile(`(?i)` + leftEnd + `(?:multiplied\s+by|times|x)` + rightStart), "*"},
		{regexp.MustCompile(`(?i)` + leftEnd + `(?:divided\s+by|over)` + rightStart), "/"},
		{regexp.MustCompile(`(?i)` + leftEnd + `plus` + rightStart), "+"},
		{regexp.MustCompile(`(?i)` + leftEnd + `minus` + rightStart), "-"},
		{regexp.MustCompile(`(?i)` + leftEnd + `(?:modulo|mod)` + rightStart), "%"},
	}
	// exprRe finds a stretch of arithmetic; "% of" first, so that it
	// takes the "of" of a percentage.
	exprRe = regexp.MustCompile(`(?:%\s*of\b|[-+*/%^().,×÷\d\s]|\b(?:sqrt|cbrt|abs|min|max|pow|log|ln|sin|cos|tan|exp|pi)\b)+`)
	// operatorRe finds what makes a stretch arithmetic rather than a
	// number: an operator between operands, a percentage or a function.
	operatorRe = regexp.MustCompile(`[\d)%]\s*[-+*/^×÷%]\s*[\d(.]|\d\s*%|\b(?:sqrt|cbrt|abs|min|max|pow|log|ln|sin|cos|tan|exp)\s*\(`)
)

// thousandsRe finds a number written with thousands separators (1,200),
// not in a list of arguments (max(1,200)).
var thousandsRe = regexp.MustCompile(`(^|[^\d.,(])(\d{1,3}(?:,\d{3})+)\b`)

// normalizeArithmetic returns text with the arithmetic it writes in words
// written in symbols.
func normalizeArithmetic(text string) string {
	text = spellNumbers(text)
	text = thousandsRe.ReplaceAllStringFunc(text, func(m string) string { return strings.ReplaceAll(m, ",", "") })
	for _, p := range arithPhrases {
		text = p.re.ReplaceAllString(text, p.with)
	}
	// An operand may sit between two operators ("1 plus 2 plus 3"), and a
	// match takes it: repeat until nothing is left, which takes at most
	// one pass per operator word.
	for range len(text) {
		changed := false
		for _, p := range arithInfix {
			if r := p.re.ReplaceAllString(text, "$1 "+p.op+" $2"); r != text {
				text, changed = r, true
			}
		}
		if !changed {
			break
		}
	}
	return text
}

// expression returns the longest stretch of arithmetic in text, after
// normalizeArithmetic, that has a digit; "" when there is none.
func expression(text string) string {
	best := ""
	for _, m := range exprRe.FindAllString(normalizeArithmetic(text), -1) {
		if m = strings.Trim(m, " ,."); len(m) > len(best) && strings.ContainsAny(m, "0123456789") {
			best = m
		}
	}
	return best
}

// isArithmetic reports whether text asks for arithmetic: its expression
// has an operator, a percentage or a function, not only a number.
func isArithmetic(text string) bool {
	return operatorRe.MatchString(expression(text))
}
