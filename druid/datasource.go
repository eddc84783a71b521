package druid

import (
	"fmt"
	"strconv"
	"unicode/utf16"
)

// CheckDataSource refuses a datasource name Druid refuses, by Druid's own
// rule: DataSchema's constructor calls IdUtils.validateId("dataSource", …)
// (apache/druid, processing/src/main/java/org/apache/druid/common/utils/
// IdUtils.java), which refuses a name that is empty, starts with '.',
// holds a '/', holds whitespace other than a space (Java's \s: tab, line
// feed, vertical tab, form feed, carriage return), or holds a UTF-16 code
// unit c with 0 < c < 31, 127 < c < 159, '\ud800' < c < '\uf8ff' or
// '\ufff0' < c < '\uffff' (ZooKeeper's rule for znode names, through
// Curator: every character outside the basic multilingual plane is
// refused, its low surrogate being in the third range). The bounds are
// Druid's, exclusive as Druid writes them: NUL, 0x1F, DEL and 0x9F pass
// there, and so they pass here; a name Druid takes is never refused.
func CheckDataSource(name string) error {
	if name == "" {
		return fmt.Errorf("%w: dataSource is required", ErrInvalid)
	}
	if name[0] == '.' {
		return fmt.Errorf("%w: dataSource %s starts with '.', which Druid refuses", ErrInvalid, strconv.Quote(name))
	}
	i := 0
	for _, r := range name {
		for _, c := range utf16.AppendRune(nil, r) {
			if bad, what := refusedUnit(c); bad {
				return fmt.Errorf("%w: dataSource %s holds %s (%U) at position %d, which Druid refuses in a datasource name",
					ErrInvalid, strconv.Quote(name), what, r, i)
			}
			i++
		}
	}
	return nil
}

// refusedUnit reports whether Druid's IdUtils.validateId refuses the UTF-16
// code unit c, and names it.
func refusedUnit(c uint16) (bool, string) {
	switch {
	case c == '/':
		return true, "a '/'"
	case c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
		return true, "whitespace other than a space"
	case c > 0 && c < 31 || c > 127 && c < 159:
		return true, "a control character"
	case c > 0xd800 && c < 0xf8ff || c > 0xfff0 && c < 0xffff:
		return true, "a character outside Druid's range (a surrogate, private use, or beyond the basic multilingual plane)"
	}
	return false, ""
}
