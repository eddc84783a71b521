package memory

import (
	"math"
	"runtime/debug"
	"testing"
	"testing/fstest"
)

func TestCgroupLimit(t *testing.T) {
	t.Parallel()
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	v1self := file("4:memory:/pod/app\n3:cpu:/\n0::/\n")
	tests := []struct {
		name  string
		fs    fstest.MapFS
		want  int64
		where string
	}{
		{"v1, the group's own limit", fstest.MapFS{
			"proc/self/cgroup":                                   v1self,
			"sys/fs/cgroup/memory/memory.limit_in_bytes":         file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/pod/memory.limit_in_bytes":     file("1073741824\n"),
			"sys/fs/cgroup/memory/pod/app/memory.limit_in_bytes": file("536870912\n"),
		}, 512 << 20, "/sys/fs/cgroup/memory/pod/app/memory.limit_in_bytes"},
		{"v1, an ancestor's tighter limit", fstest.MapFS{
			"proc/self/cgroup": v1self,
			"sys/fs/cgroup/memory/pod/memory.limit_in_bytes":     file("268435456\n"),
			"sys/fs/cgroup/memory/pod/app/memory.limit_in_bytes": file("9223372036854771712\n"),
		}, 256 << 20, "/sys/fs/cgroup/memory/pod/memory.limit_in_bytes"},
		{"v1 in a cgroup namespace: the group at the top", fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("805306368\n"),
		}, 768 << 20, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"v1 unlimited", fstest.MapFS{
			"proc/self/cgroup":                           v1self,
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
		}, 0, ""},
		{"v2", fstest.MapFS{
			"proc/self/cgroup":                       file("0::/kubepods/pod1\n"),
			"sys/fs/cgroup/cgroup.controllers":       file("cpu memory\n"),
			"sys/fs/cgroup/kubepods/pod1/memory.max": file("2147483648\n"),
			"sys/fs/cgroup/kubepods/memory.max":      file("max\n"),
		}, 2 << 30, "/sys/fs/cgroup/kubepods/pod1/memory.max"},
		{"v2 max", fstest.MapFS{
			"proc/self/cgroup":                 file("0::/\n"),
			"sys/fs/cgroup/cgroup.controllers": file("memory\n"),
			"sys/fs/cgroup/memory.max":         file("max\n"),
		}, 0, ""},
		{"no /proc", fstest.MapFS{}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, where, err := cgroupLimit(tt.fs)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || where != tt.where {
				t.Errorf("cgroupLimit = %d from %q, want %d from %q", got, where, tt.want, tt.where)
			}
		})
	}
	if _, _, err := cgroupLimit(fstest.MapFS{"proc/self/cgroup": v1self,
		"sys/fs/cgroup/memory/pod/app/memory.limit_in_bytes": file("lots\n")}); err == nil {
		t.Error("a limit that is not a number was read without an error")
	}
}

// TestSetLimit sets the process's Go memory limit: it does not run in
// parallel, and puts the limit back.
func TestSetLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	fsys := fstest.MapFS{
		"proc/self/cgroup":                           {Data: []byte("4:memory:/\n")},
		"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("1073741824\n")},
	}
	none := func(string) string { return "" }
	l, err := SetLimit(none, fsys)
	if err != nil {
		t.Fatal(err)
	}
	gib := int64(1 << 30)
	want := int64(float64(gib) * ContainerShare)
	if l.Bytes != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("from a 1 GiB cgroup: limit %d (Go's %d), want %d", l.Bytes, debug.SetMemoryLimit(-1), want)
	}
	if l.Origin != "90% of the container's 1 GiB (/sys/fs/cgroup/memory/memory.limit_in_bytes)" {
		t.Errorf("origin %q", l.Origin)
	}

	// A GOMEMLIMIT given wins over the cgroup: the runtime applied it.
	debug.SetMemoryLimit(300 << 20)
	l, err = SetLimit(func(k string) string { return map[string]string{"GOMEMLIMIT": "300MiB"}[k] }, fsys)
	if err != nil || l.Bytes != 300<<20 || l.Origin != "GOMEMLIMIT" || debug.SetMemoryLimit(-1) != 300<<20 {
		t.Errorf("with GOMEMLIMIT: %+v, %v, Go's limit %d", l, err, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	l, err = SetLimit(func(k string) string { return map[string]string{"GOMEMLIMIT": "off"}[k] }, fsys)
	if err != nil || l.Bytes != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT=off: %+v, %v, Go's limit %d", l, err, debug.SetMemoryLimit(-1))
	}
}
