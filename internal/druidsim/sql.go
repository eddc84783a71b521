package druidsim

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/druidiceberg/sidecar/druid"
)

// tokenKind is the kind of a Druid SQL token.
type tokenKind int

const (
	tokWord   tokenKind = iota // a keyword or function name
	tokIdent                   // a "quoted identifier", unquoted
	tokString                  // a 'string literal', unquoted
	tokPunct                   // ( ) , and comparison operators
)

type token struct {
	kind tokenKind
	text string
}

// tokenize splits a statement into tokens as Druid SQL (Calcite) reads
// them: a doubled quote inside quotes is one quote, and nothing else
// escapes.
func tokenize(sql string) ([]token, error) {
	var out []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
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
			if i+1 < len(sql) && sql[i+1] == '=' {
				out = append(out, token{tokPunct, sql[i : i+2]})
				i += 2
				continue
			}
			out = append(out, token{tokPunct, string(c)})
			i++
		case c == '(' || c == ')' || c == ',' || c == '=':
			out = append(out, token{tokPunct, string(c)})
			i++
		case c == '_' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)):
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

// statement is an MSQ INSERT or REPLACE of the shape the sidecar writes.
type statement struct {
	replace    bool
	dataSource string
	// overwrite: all, or [start, end) when overwriteAll is false.
	overwriteAll bool
	start, end   time.Time
	timeFunc     string // MILLIS_TO_TIMESTAMP or TIME_PARSE
	timeColumn   string
	columns      []string
	inputSource  json.RawMessage
	inputFormat  json.RawMessage
	signature    []struct{ Name, Type string }
	where        *condition
	partitioned  druid.Granularity
}

// condition is the WHERE of a statement: the time within [start, end), or
// a column not null.
type condition struct {
	notNull    string
	start, end time.Time
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) next() (token, error) {
	if p.pos >= len(p.toks) {
		return token{}, fmt.Errorf("statement ends early")
	}
	t := p.toks[p.pos]
	p.pos++
	return t, nil
}

func (p *parser) peekWord(w string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tokWord && p.toks[p.pos].text == w
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

// timestamp reads TIMESTAMP '2006-01-02 15:04:05.000', in UTC.
func (p *parser) timestamp() (time.Time, error) {
	if err := p.words("TIMESTAMP"); err != nil {
		return time.Time{}, err
	}
	s, err := p.expect(tokString, "")
	if err != nil {
		return time.Time{}, err
	}
	for _, layout := range []string{"2006-01-02 15:04:05.000", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("TIMESTAMP %q is not a Druid SQL timestamp", s)
}

// timeRange reads `x >= TIMESTAMP '…' AND x < TIMESTAMP '…'` where x is what
// lhs reads.
func (p *parser) timeRange(lhs func() error) (start, end time.Time, err error) {
	if err = lhs(); err != nil {
		return
	}
	if _, err = p.expect(tokPunct, ">="); err != nil {
		return
	}
	if start, err = p.timestamp(); err != nil {
		return
	}
	if err = p.words("AND"); err != nil {
		return
	}
	if err = lhs(); err != nil {
		return
	}
	if _, err = p.expect(tokPunct, "<"); err != nil {
		return
	}
	end, err = p.timestamp()
	return
}

// parseStatement parses what the sidecar's generators write, and refuses
// anything else.
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
	if st.dataSource, err = p.expect(tokIdent, ""); err != nil {
		return nil, err
	}
	if st.replace {
		if err := p.words("OVERWRITE"); err != nil {
			return nil, err
		}
		if p.peekWord("ALL") {
			p.pos++
			st.overwriteAll = true
		} else {
			if err := p.words("WHERE"); err != nil {
				return nil, err
			}
			st.start, st.end, err = p.timeRange(func() error { _, err := p.expect(tokIdent, "__time"); return err })
			if err != nil {
				return nil, fmt.Errorf("OVERWRITE WHERE: %w", err)
			}
		}
	}
	if err := p.words("SELECT"); err != nil {
		return nil, err
	}
	fn, err := p.next()
	if err != nil || fn.kind != tokWord || (fn.text != "MILLIS_TO_TIMESTAMP" && fn.text != "TIME_PARSE") {
		return nil, fmt.Errorf("SELECT: want MILLIS_TO_TIMESTAMP or TIME_PARSE of the time column, got %q", fn.text)
	}
	st.timeFunc = fn.text
	if _, err := p.expect(tokPunct, "("); err != nil {
		return nil, err
	}
	if st.timeColumn, err = p.expect(tokIdent, ""); err != nil {
		return nil, err
	}
	if _, err := p.expect(tokPunct, ")"); err != nil {
		return nil, err
	}
	if err := p.words("AS"); err != nil {
		return nil, err
	}
	if _, err := p.expect(tokIdent, "__time"); err != nil {
		return nil, err
	}
	for p.pos < len(p.toks) && p.toks[p.pos].kind == tokPunct && p.toks[p.pos].text == "," {
		p.pos++
		col, err := p.expect(tokIdent, "")
		if err != nil {
			return nil, err
		}
		st.columns = append(st.columns, col)
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
	if p.peekWord("WHERE") {
		p.pos++
		cond := &condition{}
		if p.pos < len(p.toks) && p.toks[p.pos].kind == tokIdent {
			cond.notNull = p.toks[p.pos].text
			p.pos++
			if err := p.words("IS", "NOT", "NULL"); err != nil {
				return nil, err
			}
		} else {
			cond.start, cond.end, err = p.timeRange(func() error {
				if err := p.words(st.timeFunc); err != nil {
					return err
				}
				if _, err := p.expect(tokPunct, "("); err != nil {
					return err
				}
				if _, err := p.expect(tokIdent, st.timeColumn); err != nil {
					return err
				}
				_, err := p.expect(tokPunct, ")")
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("WHERE: %w", err)
			}
		}
		st.where = cond
	}
	if err := p.words("PARTITIONED", "BY"); err != nil {
		return nil, err
	}
	g, err := p.next()
	if err != nil {
		return nil, err
	}
	if g.text == "ALL" {
		if err := p.words("TIME"); err != nil {
			return nil, err
		}
		st.partitioned = druid.GranularityAll
	} else if st.partitioned, err = druid.ParseGranularity(g.text); err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("trailing tokens after PARTITIONED BY: %q", p.toks[p.pos].text)
	}
	return st, nil
}
