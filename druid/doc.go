// Package druid holds Druid's vocabulary both ways. What the sidecar reads
// as Druid writes it: the icebergFilter object of Druid's iceberg input
// source (Filter, bounded by CheckFilterBounds before it is decoded) and
// the date-times, intervals and periods Druid reads with Joda
// (ParseInstant, ParseInterval). What it generates for Druid, and what it
// must know of Druid to do so: granularities, the Iceberg to Druid type
// mapping, index_parallel tasks and MSQ statements, and the Druid version
// each generated feature needs. It plans nothing: the planner turns a
// Filter into an iceberg-go expression over the table's schema, and
// handlers and sync give it the planned input source and the served
// columns.
//
// Every rule here follows a Druid class, named where the rule is; the test
// model of Druid (internal/druidsim) enforces the same rules independently.
package druid

import "errors"

// ErrInvalid: a parameter of a spec or statement is not one Druid takes.
var ErrInvalid = errors.New("invalid Druid parameter")
