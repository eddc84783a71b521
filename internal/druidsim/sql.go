package druidsim

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// The model's Druid SQL: the statements of SQL-based ingestion
// (sql/src/main/codegen/includes/insert.ftl, replace.ftl, common.ftl),
// with the expressions the sidecar writes and a few more, tokenized as
// Calcite does: a doubled quote inside quotes is one quote, and nothing
// else escapes.

type tokenKind int

const (
	tokWord   tokenKind = iota // a keyword or function name, upper-cased
	tokIdent                   // a "quoted identifier", unquoted
	tokString                  // a 'string literal', unquoted
	tokNumber                  // an unsigned integer literal
	tokPunct                   // ( ) , and comparison operators
)

type token struct {
	kind tokenKind
	text string
}

func tokenize(sql string) ([]token, error) {
	var out []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			return nil, fmt.Errorf("a comment at byte %d: the sidecar writes none", i)
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(sql) {
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				b.WriteByte(sql[j])
				j++
			}
			if !closed {
				return nil, fmt.Errorf("unterminated %c at byte %d", c, i)
			}
			kind := tokIdent
			if c == '\'' {
				kind = tokString
			}
			out = append(out, token{kind, b.String()})
			i = j
		case c == '>' || c == '<':
			if i+1 < len(sql) && (sql[i+1] == '=' || (c == '<' && sql[i+1] == '>')) {
				out = append(out, token{tokPunct, sql[i : i+2]})
				i += 2
				continue
			}
			out = append(out, token{tokPunct, string(c)})
			i++
		case c == '(' || c == ')' || c == ',' || c == '=':
			out = append(out, token{tokPunct, string(c)})
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			out = append(out, token{tokNumber, sql[i:j]})
			i = j
		case c == '_' || unicode.IsLetter(rune(c)):
			j := i
			for j < len(sql) && (sql[j] == '_' || unicode.IsLetter(rune(sql[j])) || unicode.IsDigit(rune(sql[j]))) {
				j++
			}
			out = append(out, token{tokWord, strings.ToUpper(sql[i:j])})
			i = j
		default:
			return nil, fmt.Errorf("unexpected %q at byte %d", c, i)
		}
	}
	return out, nil
}

// expr is an expression of a SELECT list or a condition.
type expr struct {
	kind  string // ident, string, number, timestamp, call, case
	text  string // the identifier, literal text or function name
	args  []*expr
	whens [][2]*expr // CASE arg WHEN a THEN b
	els   *expr
}

// cond is a boolean condition.
type cond struct {
	op   string // and, or, not, cmp, isnull, notnull, between
	cmp  string // >=, <=, >, <, =, <>
	l, r *cond
	a, b *expr
	c    *expr // BETWEEN's upper bound
}

// selectItem is one item of the SELECT list.
type selectItem struct {
	e    *expr
	name string
}

// statement is an MSQ INSERT or REPLACE.
type statement struct {
	replace      bool
	dataSource   string
	overwriteAll bool
	overwrite    *cond
	items        []selectItem
	inputSource  json.RawMessage
	inputFormat  json.RawMessage
	signature    []struct{ Name, Type string }
	where        *cond
	partition    partitionClause
	clusteredBy  []*expr
}

// partitionClause is what follows PARTITIONED BY.
type partitionClause struct {
	keyword string // HOUR, DAY, MONTH, YEAR, ALL
	floor   *expr  // FLOOR(__time TO unit) or TIME_FLOOR(__time, 'period')
	literal string // a string literal (Druid 30 and later)
	word    string // any other word: refused
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token {
	if p.pos >= len(p.toks) {
		return token{}
	}
	return p.toks[p.pos]
}

func (p *parser) next() (token, error) {
	if p.pos >= len(p.toks) {
		return token{}, fmt.Errorf("statement ends early")
	}
	t := p.toks[p.pos]
	p.pos++
	return t, nil
}

func (p *parser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tokWord && t.text == w
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == s
}

func (p *parser) expect(kind tokenKind, text string) (string, error) {
	t, err := p.next()
	if err != nil {
		return "", fmt.Errorf("want %q: %w", text, err)
	}
	if t.kind != kind || (text != "" && t.text != text) {
		return "", fmt.Errorf("token %d: got %q, want %q", p.pos, t.text, text)
	}
	return t.text, nil
}

func (p *parser) words(ws ...string) error {
	for _, w := range ws {
		if _, err := p.expect(tokWord, w); err != nil {
			return err
		}
	}
	return nil
}

// parseStatement parses an INSERT or REPLACE.
func parseStatement(sql string) (*statement, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	st := &statement{}
	verb, err := p.next()
	if err != nil {
		return nil, err
	}
	switch {
	case verb.kind == tokWord && verb.text == "INSERT":
	case verb.kind == tokWord && verb.text == "REPLACE":
		st.replace = true
	default:
		return nil, fmt.Errorf("want INSERT or REPLACE, got %q", verb.text)
	}
	if err := p.words("INTO"); err != nil {
		return nil, err
	}
	ds, err := p.next()
	if err != nil || (ds.kind != tokIdent && ds.kind != tokWord) {
		return nil, fmt.Errorf("INTO: want a table name")
	}
	st.dataSource = ds.text
	if st.replace {
		// replace.ftl: OVERWRITE is required, then ALL or any WHERE
		// condition (checked when it becomes intervals).
		if !p.isWord("OVERWRITE") {
			return nil, fmt.Errorf("Missing time chunk information in OVERWRITE clause for REPLACE. Use OVERWRITE WHERE <__time based condition> or OVERWRITE ALL to overwrite the entire table.")
		}
		p.pos++
		if p.isWord("ALL") {
			p.pos++
			st.overwriteAll = true
		} else {
			if err := p.words("WHERE"); err != nil {
				return nil, err
			}
			if st.overwrite, err = p.condition(); err != nil {
				return nil, fmt.Errorf("OVERWRITE WHERE: %w", err)
			}
		}
	}
	if err := p.words("SELECT"); err != nil {
		return nil, err
	}
	for {
		e, err := p.expr()
		if err != nil {
			return nil, fmt.Errorf("SELECT: %w", err)
		}
		item := selectItem{e: e}
		if e.kind == "ident" {
			item.name = e.text
		}
		if p.isWord("AS") {
			p.pos++
			t, err := p.next()
			if err != nil || (t.kind != tokIdent && t.kind != tokWord) {
				return nil, fmt.Errorf("SELECT: AS wants a name")
			}
			item.name = t.text
		}
		if item.name == "" {
			return nil, fmt.Errorf("SELECT: an expression without a name (AS)")
		}
		st.items = append(st.items, item)
		if !p.isPunct(",") {
			break
		}
		p.pos++
	}
	if err := p.words("FROM", "TABLE"); err != nil {
		return nil, err
	}
	if _, err := p.expect(tokPunct, "("); err != nil {
		return nil, err
	}
	if err := p.words("EXTERN"); err != nil {
		return nil, err
	}
	if _, err := p.expect(tokPunct, "("); err != nil {
		return nil, err
	}
	var args []string
	for i := range 3 {
		if i > 0 {
			if _, err := p.expect(tokPunct, ","); err != nil {
				return nil, err
			}
		}
		a, err := p.expect(tokString, "")
		if err != nil {
			return nil, fmt.Errorf("EXTERN argument %d: %w", i+1, err)
		}
		args = append(args, a)
	}
	for range 2 {
		if _, err := p.expect(tokPunct, ")"); err != nil {
			return nil, err
		}
	}
	st.inputSource, st.inputFormat = json.RawMessage(args[0]), json.RawMessage(args[1])
	if !json.Valid(st.inputSource) || !json.Valid(st.inputFormat) {
		return nil, fmt.Errorf("EXTERN: inputSource or inputFormat is not JSON")
	}
	if err := json.Unmarshal([]byte(args[2]), &st.signature); err != nil {
		return nil, fmt.Errorf("EXTERN signature: %w", err)
	}
	if p.isWord("WHERE") {
		p.pos++
		if st.where, err = p.condition(); err != nil {
			return nil, fmt.Errorf("WHERE: %w", err)
		}
	}
	// DruidSqlInsert / DruidSqlReplace: PARTITIONED BY is required.
	if !p.isWord("PARTITIONED") {
		return nil, fmt.Errorf("%s statements must specify a PARTITIONED BY clause explicitly", map[bool]string{true: "REPLACE", false: "INSERT"}[st.replace])
	}
	if err := p.words("PARTITIONED", "BY"); err != nil {
		return nil, err
	}
	if st.partition, err = p.partition(); err != nil {
		return nil, err
	}
	// insert.ftl / replace.ftl: an optional CLUSTERED BY list after
	// PARTITIONED BY.
	if p.isWord("CLUSTERED") {
		if err := p.words("CLUSTERED", "BY"); err != nil {
			return nil, err
		}
		for {
			e, err := p.expr()
			if err != nil {
				return nil, fmt.Errorf("CLUSTERED BY: %w", err)
			}
			st.clusteredBy = append(st.clusteredBy, e)
			if !p.isPunct(",") {
				break
			}
			p.pos++
		}
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("trailing tokens after PARTITIONED BY: %q", p.toks[p.pos].text)
	}
	return st, nil
}

// partition reads PartitionGranularity (common.ftl): the keywords HOUR,
// DAY, MONTH, YEAR and ALL [TIME], or an expression that
// DruidSqlParserUtils.convertSqlNodeToGranularity reads.
func (p *parser) partition() (partitionClause, error) {
	t, err := p.next()
	if err != nil {
		return partitionClause{}, err
	}
	switch {
	case t.kind == tokWord && (t.text == "HOUR" || t.text == "DAY" || t.text == "MONTH" || t.text == "YEAR"):
		return partitionClause{keyword: t.text}, nil
	case t.kind == tokWord && t.text == "ALL":
		if p.isWord("TIME") {
			p.pos++
		}
		return partitionClause{keyword: "ALL"}, nil
	case t.kind == tokString:
		return partitionClause{literal: t.text}, nil
	case t.kind == tokWord && (t.text == "FLOOR" || t.text == "TIME_FLOOR"):
		p.pos--
		e, err := p.expr()
		if err != nil {
			return partitionClause{}, err
		}
		return partitionClause{floor: e}, nil
	}
	return partitionClause{word: t.text}, nil
}

// condition reads OR of ANDs of NOTs of predicates.
func (p *parser) condition() (*cond, error) {
	l, err := p.conjunction()
	if err != nil {
		return nil, err
	}
	for p.isWord("OR") {
		p.pos++
		r, err := p.conjunction()
		if err != nil {
			return nil, err
		}
		l = &cond{op: "or", l: l, r: r}
	}
	return l, nil
}

func (p *parser) conjunction() (*cond, error) {
	l, err := p.negation()
	if err != nil {
		return nil, err
	}
	for p.isWord("AND") {
		p.pos++
		r, err := p.negation()
		if err != nil {
			return nil, err
		}
		l = &cond{op: "and", l: l, r: r}
	}
	return l, nil
}

func (p *parser) negation() (*cond, error) {
	if p.isWord("NOT") {
		p.pos++
		c, err := p.negation()
		if err != nil {
			return nil, err
		}
		return &cond{op: "not", l: c}, nil
	}
	if p.isPunct("(") {
		// A parenthesised condition (expressions in parentheses are not
		// written by the sidecar).
		p.pos++
		c, err := p.condition()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tokPunct, ")"); err != nil {
			return nil, err
		}
		return c, nil
	}
	a, err := p.expr()
	if err != nil {
		return nil, err
	}
	switch {
	case p.isWord("IS"):
		p.pos++
		op := "isnull"
		if p.isWord("NOT") {
			p.pos++
			op = "notnull"
		}
		if err := p.words("NULL"); err != nil {
			return nil, err
		}
		return &cond{op: op, a: a}, nil
	case p.isWord("BETWEEN"):
		p.pos++
		lo, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.words("AND"); err != nil {
			return nil, err
		}
		hi, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &cond{op: "between", a: a, b: lo, c: hi}, nil
	}
	t, err := p.next()
	if err != nil || t.kind != tokPunct || !strings.Contains(">= <= > < = <>", t.text) || t.text == "(" || t.text == ")" || t.text == "," {
		return nil, fmt.Errorf("want a comparison, got %q", t.text)
	}
	b, err := p.expr()
	if err != nil {
		return nil, err
	}
	return &cond{op: "cmp", cmp: t.text, a: a, b: b}, nil
}

// expr reads an identifier, a literal, TIMESTAMP 'text', a function call,
// FLOOR(x TO unit) or a simple CASE.
func (p *parser) expr() (*expr, error) {
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tokIdent:
		return &expr{kind: "ident", text: t.text}, nil
	case tokString:
		return &expr{kind: "string", text: t.text}, nil
	case tokNumber:
		return &expr{kind: "number", text: t.text}, nil
	case tokPunct:
		return nil, fmt.Errorf("unexpected %q", t.text)
	}
	switch t.text {
	case "TIMESTAMP":
		s, err := p.expect(tokString, "")
		if err != nil {
			return nil, fmt.Errorf("TIMESTAMP: %w", err)
		}
		return &expr{kind: "timestamp", text: s}, nil
	case "NULL":
		return &expr{kind: "null"}, nil
	case "CASE":
		e := &expr{kind: "case"}
		if e.args, err = p.exprs(1); err != nil {
			return nil, err
		}
		for p.isWord("WHEN") {
			p.pos++
			w, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.words("THEN"); err != nil {
				return nil, err
			}
			th, err := p.expr()
			if err != nil {
				return nil, err
			}
			e.whens = append(e.whens, [2]*expr{w, th})
		}
		if len(e.whens) == 0 {
			return nil, fmt.Errorf("CASE without WHEN")
		}
		if p.isWord("ELSE") {
			p.pos++
			if e.els, err = p.expr(); err != nil {
				return nil, err
			}
		}
		return e, p.words("END")
	}
	if !p.isPunct("(") {
		// An unquoted identifier.
		return &expr{kind: "ident", text: t.text}, nil
	}
	p.pos++
	e := &expr{kind: "call", text: t.text}
	if t.text == "FLOOR" {
		arg, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.words("TO"); err != nil {
			return nil, err
		}
		unit, err := p.expect(tokWord, "")
		if err != nil {
			return nil, err
		}
		e.args = []*expr{arg, {kind: "unit", text: unit}}
	} else {
		for !p.isPunct(")") {
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			e.args = append(e.args, a)
			if !p.isPunct(",") {
				break
			}
			p.pos++
		}
	}
	if _, err := p.expect(tokPunct, ")"); err != nil {
		return nil, err
	}
	return e, nil
}

func (p *parser) exprs(n int) ([]*expr, error) {
	var out []*expr
	for range n {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// String renders an expression for messages.
func (e *expr) String() string {
	switch e.kind {
	case "ident":
		return `"` + e.text + `"`
	case "string":
		return "'" + e.text + "'"
	case "timestamp":
		return "TIMESTAMP '" + e.text + "'"
	case "call":
		var args []string
		for _, a := range e.args {
			args = append(args, a.String())
		}
		return e.text + "(" + strings.Join(args, ", ") + ")"
	case "case":
		return "CASE … END"
	}
	return e.text
}
