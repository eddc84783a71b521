package splits

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/druidiceberg/sidecar/internal/fault"
	"github.com/druidiceberg/sidecar/token"
)

// The metadata columns of a plan (token.MetaColumns): what the request
// asks for is checked against the table, served after the table's
// columns, and each split carries what its rows need of its data file.

// minRowLineageVersion is the format version that defines row lineage:
// _row_id and _last_updated_sequence_number exist in no older table
// (iceberg-go's scan refuses them there too).
const minRowLineageVersion = 3

// addMetaColumns checks the request's metadata columns against pl's table
// and schema, and adds them to the fields the plan serves.
func (pl *planning) addMetaColumns() error {
	m := pl.req.MetaColumns
	if m == 0 {
		return nil
	}
	if !m.Valid() {
		return fmt.Errorf("%w: metadataColumns names a column this sidecar does not know", fault.ErrBadRequest)
	}
	meta := pl.tbl.Metadata()
	if lineage := m & (token.MetaRowID | token.MetaLastUpdated); lineage != 0 && meta.Version() < minRowLineageVersion {
		return fmt.Errorf("%w: metadataColumns %s: row lineage needs format version %d, and %s is version %d",
			fault.ErrBadRequest, strings.Join(lineage.Names(), ", "), minRowLineageVersion, pl.req.Table, meta.Version())
	}
	var pt *iceberg.StructType
	if m.Has(token.MetaPartition) {
		pt = PartitionType(meta, pl.schema)
	}
	for _, f := range m.Fields(pt) {
		if _, ok := pl.schema.FindFieldByName(f.Name); ok {
			return fmt.Errorf("%w: metadataColumns %s: %s has a column of that name, and a row has one key of each name",
				fault.ErrBadRequest, f.Name, pl.req.Table)
		}
		pl.plan.Fields = append(pl.plan.Fields, f)
	}
	return nil
}

// PartitionType is the table's partition type as the schema resolves it:
// every partition field of every spec, by partition field id, so that a
// data file of any spec has a value (or null) for each; the type of the
// _partition metadata column. A field that several specs share takes the
// newest spec's name and type, unless that spec voids it.
func PartitionType(meta table.Metadata, schema *iceberg.Schema) *iceberg.StructType {
	specs := slices.Clone(meta.PartitionSpecs())
	slices.SortFunc(specs, func(a, b iceberg.PartitionSpec) int { return cmp.Compare(b.ID(), a.ID()) })
	byID := map[int]iceberg.NestedField{}
	void := map[int]bool{}
	for _, spec := range specs {
		fields := spec.PartitionType(schema).FieldList
		for i, pf := range spec.Fields() {
			if i >= len(fields) {
				break
			}
			_, isVoid := pf.Transform.(iceberg.VoidTransform)
			if _, seen := byID[pf.FieldID]; seen && (isVoid || !void[pf.FieldID]) {
				continue
			}
			byID[pf.FieldID], void[pf.FieldID] = fields[i], isVoid
		}
	}
	out := make([]iceberg.NestedField, 0, len(byID))
	for _, f := range byID {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b iceberg.NestedField) int { return cmp.Compare(a.ID, b.ID) })
	return &iceberg.StructType{FieldList: out}
}

// withMeta gives sp, task t's split on the row path, the metadata columns
// of pl's request and what its rows need of t's data file: the row
// lineage it inherits and its partition.
func (pl *planning) withMeta(sp *token.Split, t table.FileScanTask) error {
	m := pl.req.MetaColumns
	if m == 0 {
		return nil
	}
	sp.Meta = m
	if m.Has(token.MetaRowID) && t.FirstRowID != nil {
		v := *t.FirstRowID
		sp.Data.FirstRowID = &v
	}
	if m.Has(token.MetaLastUpdated) && t.DataSequenceNumber != nil {
		v := *t.DataSequenceNumber
		sp.Data.DataSequence = &v
	}
	if m.Has(token.MetaPartition) {
		var err error
		if sp.Data.Partition, err = partitionValues(pl.tbl.Metadata(), t.File); err != nil {
			return err
		}
	}
	return nil
}

// partitionValues are data file f's partition values by partition field
// id, as token.DataFile.Partition holds them; nulls are left out.
func partitionValues(meta table.Metadata, f iceberg.DataFile) ([]token.IdentityValue, error) {
	spec := meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s names partition spec %d, which the metadata lacks", f.FilePath(), f.SpecID())
	}
	part := f.Partition()
	var out []token.IdentityValue
	for _, pf := range spec.Fields() {
		v, ok := part[pf.FieldID]
		if !ok || v == nil {
			continue
		}
		raw, err := identityJSON(v)
		if err != nil {
			return nil, fmt.Errorf("data file %s: partition field %s: %w", f.FilePath(), pf.Name, err)
		}
		out = append(out, token.IdentityValue{FieldID: pf.FieldID, Value: raw})
	}
	return out, nil
}
