package sidecartest

import (
	"strings"
	"testing"
)

// MetricSum adds up every series of a counter or gauge family in the
// server's registry.
func MetricSum(t testing.TB, srv *Server, name string) float64 {
	t.Helper()
	sum, err := GatherSum(srv, name)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// GatherSum is MetricSum for callers without a testing.TB of their own
// (a load's hostile clients, in goroutines of their own).
func GatherSum(srv *Server, name string) (float64, error) {
	families, err := srv.Reg.Gather()
	if err != nil {
		return 0, err
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum, nil
}

// MetricValue is the value of the series of a counter or gauge whose
// label has the value given; 0 when there is none.
func MetricValue(t testing.TB, srv *Server, name, label, value string) float64 {
	t.Helper()
	families, err := srv.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

// MetricsOf gathers the server's registry into name{labels} → value, for
// the sidecar's own counters and gauges.
func MetricsOf(t testing.TB, srv *Server) map[string]float64 {
	t.Helper()
	families, err := srv.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "sidecar_") {
			continue
		}
		for _, m := range f.GetMetric() {
			key := f.GetName()
			if len(m.GetLabel()) > 0 {
				var ls []string
				for _, l := range m.GetLabel() {
					ls = append(ls, l.GetName()+`="`+l.GetValue()+`"`)
				}
				key += "{" + strings.Join(ls, ",") + "}"
			}
			out[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}
