package druid

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/druidiceberg/sidecar/internal/fault"
)

// The bounds of an icebergFilter. A filter within them costs planning work
// in proportion to its size; past any of them CheckFilterBounds refuses it
// before it is decoded. Real filters are far inside: a few levels deep, a
// few dozen filters.
const (
	// MaxFilterBytes bounds the filter's JSON text.
	MaxFilterBytes = 128 << 10
	// MaxFilterDepth bounds how deep JSON objects and arrays nest: a `not`
	// is one level, an `and` or `or` two (its object and its list).
	MaxFilterDepth = 64
	// MaxFilterNodes bounds the filters (JSON objects) and the other
	// elements of lists (intervals) the filter holds.
	MaxFilterNodes = 1000
	// MaxFilterString bounds each string and number: a column name, a
	// value, an interval.
	MaxFilterString = 4 << 10
)

// CheckFilterBounds checks the JSON text of an icebergFilter against the
// bounds above in one pass over its tokens, stopping at the first one
// crossed; the error wraps fault.ErrBadRequest and names the bound. Text that is
// not JSON passes: decoding it says what is wrong.
func CheckFilterBounds(data []byte) error {
	if len(data) > MaxFilterBytes {
		return fmt.Errorf("%w: icebergFilter is %d bytes, more than the %d allowed", fault.ErrBadRequest, len(data), MaxFilterBytes)
	}
	var stack []jsonFrame
	nodes := 0
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			// The end, or not JSON: decoding says what is wrong.
			return nil
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && !top.array && top.wantKey {
			// A member's name, or the end of the object.
			if s, ok := tok.(string); ok {
				if len(s) > MaxFilterString {
					return filterStringError(len(s))
				}
				top.wantKey = false
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '}' || t == ']' {
				stack = stack[:len(stack)-1]
				valueDone(stack)
				continue
			}
			if t == '{' || (top != nil && top.array) {
				nodes++
			}
			if len(stack) == MaxFilterDepth {
				return fmt.Errorf("%w: icebergFilter nests more than %d levels deep (objects and lists)", fault.ErrBadRequest, MaxFilterDepth)
			}
			stack = append(stack, jsonFrame{array: t == '[', wantKey: t == '{'})
		case string:
			if len(t) > MaxFilterString {
				return filterStringError(len(t))
			}
		case json.Number:
			if len(t) > MaxFilterString {
				return filterStringError(len(t))
			}
		}
		if _, isDelim := tok.(json.Delim); !isDelim {
			if top != nil && top.array {
				nodes++
			}
			valueDone(stack)
		}
		if nodes > MaxFilterNodes {
			return fmt.Errorf("%w: icebergFilter holds more than %d filters and intervals", fault.ErrBadRequest, MaxFilterNodes)
		}
	}
}

// jsonFrame is an open object or list of the filter's JSON; an object
// wants a member's name next, or its value.
type jsonFrame struct{ array, wantKey bool }

// valueDone records that the innermost object of stack has its member's
// value: a name comes next.
func valueDone(stack []jsonFrame) {
	if n := len(stack); n > 0 && !stack[n-1].array {
		stack[n-1].wantKey = true
	}
}

func filterStringError(n int) error {
	return fmt.Errorf("%w: icebergFilter holds a string or number of %d bytes, more than the %d allowed", fault.ErrBadRequest, n, MaxFilterString)
}
