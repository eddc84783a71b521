package druid_test

import (
	"errors"
	"testing"

	"github.com/druidiceberg/sidecar/druid"
)

// TestCheckDataSource holds CheckDataSource to Druid's IdUtils.validateId:
// the names it refuses, at the bounds Druid writes, and those it takes.
func TestCheckDataSource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"orders", true},
		{"my orders", true},
		{`ds"; DELETE FROM x; '`, true},
		{"événements", true},
		{"a\x00b", true}, // Druid's ranges are exclusive: NUL, 0x1F, DEL, 0x9F pass
		{"a\x1fb", true},
		{"a\x7fb", true},
		{"a\u009fb", true},
		{"a\uf8ffb", true},
		{"", false},
		{".hidden", false},
		{"a/b", false},
		{"a\nb", false},
		{"a\rb", false},
		{"a\tb", false},
		{"a\vb", false},
		{"a\fb", false},
		{"a\x01b", false},
		{"a\x1eb", false},
		{"a\u0080b", false},
		{"a\u009eb", false},
		{"a\ue000b", false},
		{"a\ufffeb", false},
		{"a😢b", false},
		{"a\xffb", false}, // not UTF-8: read as U+FFFD, which Druid refuses
	} {
		err := druid.CheckDataSource(tc.name)
		if tc.ok && err != nil {
			t.Errorf("%q: %v, want it taken as Druid takes it", tc.name, err)
		}
		if !tc.ok && !errors.Is(err, druid.ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid as Druid refuses it", tc.name, err)
		}
	}
}
