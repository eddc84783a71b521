package druid

import "testing"

// TestAtLeast: a release reads by major and minor number, as GET /status
// answers it; what does not read is no release.
func TestAtLeast(t *testing.T) {
	for _, c := range []struct {
		release, need string
		want          bool
	}{
		{"27.0.0", VersionEmptyReplace, false},
		{"28.0.1", VersionEmptyReplace, false},
		{"29.0.0", VersionEmptyReplace, true},
		{"29.0.1-SNAPSHOT", VersionEmptyReplace, true},
		{"33.0.0", VersionEmptyReplace, true},
		{"100.0", VersionEmptyReplace, true},
		{"29.1.0", "29.2", false},
		{"", VersionEmptyReplace, false},
		{"twenty-nine", VersionEmptyReplace, false},
		{"29", VersionEmptyReplace, false},
	} {
		if got := AtLeast(c.release, c.need); got != c.want {
			t.Errorf("AtLeast(%q, %q) = %v, want %v", c.release, c.need, got, c.want)
		}
	}
}
