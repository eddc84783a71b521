package druid

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// TypeWarnings are what an operator should know of the served columns'
// types before submitting a spec over them: Druid before 26 drops the
// nulls inside lists. Its JSON reader turned a list into a Java List
// without its null elements (JSONFlattenerMaker.convertJsonNode, fixed by
// apache/druid#13712), anywhere in a column's nested data, so [1,null,3]
// is ingested as [1,3] without a word.
func TypeWarnings(fields []iceberg.NestedField) []string {
	var lists []string
	for _, f := range fields {
		if hasList(f.Type) {
			lists = append(lists, fmt.Sprintf("%q", f.Name))
		}
	}
	if len(lists) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("columns %s hold lists: Druid before %s drops the nulls inside lists ([1,null,3] is ingested "+
		"as [1,3]); lists of scalars are ARRAY columns from Druid %s, of one type in every segment from Druid %s (castToType)",
		strings.Join(lists, ", "), VersionListNulls, VersionArrays, VersionPinnedTypes)}
}

// hasList says whether a type is or holds a list.
func hasList(t iceberg.Type) bool {
	switch t := t.(type) {
	case *iceberg.ListType:
		return true
	case *iceberg.MapType:
		return hasList(t.KeyType) || hasList(t.ValueType)
	case *iceberg.StructType:
		for _, f := range t.FieldList {
			if hasList(f.Type) {
				return true
			}
		}
	}
	return false
}
