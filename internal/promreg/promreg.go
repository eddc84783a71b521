// Package promreg registers a component's collectors on the
// prometheus.Registerer its constructor is handed, so that each component
// owns its metrics (as Thanos' components do with promauto.With(reg)).
//
// Several instances of one component (a reader or a planner per catalog)
// share one registry: the first registers a collector and the others count
// into it, which is how client_golang's AlreadyRegisteredError is meant to
// be used.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c on reg and returns it, or returns the collector of
// the same description that reg already holds. With a nil reg, c is
// returned unregistered: it counts, and nothing exports it (tests). As
// promauto does, it panics on any other registration error (two
// collectors of one name with different help, labels or types), a
// programming error that the first start shows.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	err := reg.Register(c)
	if err == nil {
		return c
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err)
}
