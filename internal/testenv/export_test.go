package testenv

// PostgresToolIn is PostgresTool with another folder than Debian's
// /usr/lib/postgresql.
var PostgresToolIn = postgresTool
