package memory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// ContainerShare is the part of the container's memory limit that the Go
// memory limit is set to when none is given: the rest is memory the Go
// runtime does not manage or does not count (the binary's text, thread
// stacks of the OS, the kernel's page cache charged to the container),
// and the margin the collector needs to act before the kernel does.
const ContainerShare = 0.9

// Limit is the process's memory limit: the Go memory limit in bytes, and
// where it comes from (Origin, for logs and errors). Bytes is 0 when the
// process has none.
type Limit struct {
	Bytes  int64
	Origin string
}

// SetLimit gives the process a Go memory limit when it has none: the Go
// memory limit given (GOMEMLIMIT, which the runtime has applied already)
// is kept; otherwise the limit of the container's memory cgroup (cgroup
// v2's memory.max, or v1's memory.limit_in_bytes, the tightest of the
// process's cgroup and its ancestors), read under root (the host's "/"),
// times ContainerShare becomes it. It returns the limit the process runs
// under; without either, none.
func SetLimit(getenv func(string) string, root fs.FS) (Limit, error) {
	if getenv("GOMEMLIMIT") != "" {
		n := debug.SetMemoryLimit(-1)
		if n == math.MaxInt64 {
			return Limit{}, nil // GOMEMLIMIT=off
		}
		return Limit{Bytes: n, Origin: "GOMEMLIMIT"}, nil
	}
	cg, file, err := cgroupLimit(root)
	if err != nil || cg == 0 {
		return Limit{}, err
	}
	n := int64(float64(cg) * ContainerShare)
	debug.SetMemoryLimit(n)
	return Limit{Bytes: n, Origin: fmt.Sprintf("%.0f%% of the container's %s (%s)", ContainerShare*100, Bytes(cg), file)}, nil
}

// unlimitedV1 is where cgroup v1 says "no limit": the largest int64 that
// is a multiple of the page size, or near it.
const unlimitedV1 = int64(1) << 62

// cgroupLimit returns the tightest memory limit of the process's memory
// cgroup and its ancestors, and the file that sets it; 0 when none does.
func cgroupLimit(root fs.FS) (int64, string, error) {
	self, err := fs.ReadFile(root, "proc/self/cgroup")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil // not Linux, or no /proc
	}
	if err != nil {
		return 0, "", fmt.Errorf("read the process's cgroups: %w", err)
	}
	// cgroup v2 mounts one hierarchy at /sys/fs/cgroup, with
	// cgroup.controllers at its top; v1 (and the hybrid layout) mounts a
	// memory hierarchy of its own.
	mount, file, group := "sys/fs/cgroup/memory", "memory.limit_in_bytes", cgroupPath(self, "memory")
	if _, err := fs.Stat(root, "sys/fs/cgroup/cgroup.controllers"); err == nil {
		mount, file, group = "sys/fs/cgroup", "memory.max", cgroupPath(self, "")
	}
	var least int64
	where := ""
	// In a container with its own cgroup namespace the process's path is
	// "/", the container's own group mounted at the top; without one, the
	// path names the group under the host's top.
	for dir := path.Join(mount, group); ; dir = path.Dir(dir) {
		n, err := readLimit(root, path.Join(dir, file))
		if err != nil {
			return 0, "", err
		}
		if n > 0 && (least == 0 || n < least) {
			least, where = n, "/"+path.Join(dir, file)
		}
		if dir == mount || !strings.HasPrefix(dir, mount+"/") {
			break
		}
	}
	return least, where, nil
}

// cgroupPath returns the process's path in the hierarchy of controller
// ("" for cgroup v2's unified one) from /proc/self/cgroup's lines,
// "ID:CONTROLLERS:PATH"; "/" when it has none.
func cgroupPath(self []byte, controller string) string {
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2]
		}
		if controller != "" && strings.Contains(","+parts[1]+",", ","+controller+",") {
			return parts[2]
		}
	}
	return "/"
}

// readLimit reads one cgroup limit file; 0 when it is absent or says there
// is no limit ("max" in v2, a value near 2^63 in v1).
func readLimit(root fs.FS, name string) (int64, error) {
	b, err := fs.ReadFile(root, name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the memory limit %s: %w", name, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read the memory limit %s: %q is not a number of bytes", name, s)
	}
	if n <= 0 || n >= unlimitedV1 {
		return 0, nil
	}
	return n, nil
}

// BudgetShare is the part of the Go memory limit that the memory budget
// gives plans and delete sets: the rest is the collector's headroom (the
// heap it lets grow between collections, which the limit squeezes but
// which a plan's live heap must leave room for) and what no budget counts:
// streams' page and output buffers, table metadata and footer caches.
const BudgetShare = 0.5

// BudgetOf returns the memory budget's capacity under the limit l and
// where it comes from; 0 when l is none.
func BudgetOf(l Limit) (int64, string) {
	if l.Bytes <= 0 {
		return 0, ""
	}
	return int64(float64(l.Bytes) * BudgetShare), fmt.Sprintf("the memory budget, %.0f%% of the Go memory limit (%s)", BudgetShare*100, l.Origin)
}
