package splits

// ReadOnlyTable is readOnlyTable for the tests of package splits_test
// (those that read rows, with package reader): they share the package's
// tables, built once per run.
var ReadOnlyTable = readOnlyTable

// BenchTable is benchTable, shared with the package's internal tests that
// ask for as many files.
var BenchTable = benchTable

// RowGroupsTable is rowGroupsTable, shared with the package's internal
// tests that ask for the same version and offsets.
var RowGroupsTable = rowGroupsTable
