package druid

import (
	"strings"
	"time"
)

// Ident quotes a Druid SQL identifier; a double quote inside is doubled
// (Calcite's quoting, which Druid SQL uses).
func Ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// String quotes a Druid SQL string literal; a single quote inside is
// doubled (Druid SQL has no backslash escapes in plain literals).
func String(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Timestamp is a TIMESTAMP literal for t. Druid reads the literal's text
// in the query's sqlTimeZone (DruidSqlParserUtils.parseTimeStampWithTimeZone,
// PlannerContext), so every statement the sidecar writes sends
// sqlTimeZone UTC and the literal is t in UTC.
func Timestamp(t time.Time) string {
	return "TIMESTAMP " + String(t.UTC().Format("2006-01-02 15:04:05.000"))
}
