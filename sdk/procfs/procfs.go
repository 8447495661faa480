// Package procfs reads the "Key: value" files of Linux's /proc that count
// memory (/proc/meminfo, /proc/PID/status) into byte counts. The CPU
// backend sizes itself from /proc/meminfo, the host's budget defaults to a
// share of it, and `zkhost bench` samples processes' status files: one
// parser serves them all.
package procfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Fields reads the lines "Key: N" and "Key: N kB" of r for the keys asked,
// a kB counted as 1024 bytes. A key that is not there is absent from the
// map; a key asked whose value is not a number is an error naming it. Lines
// of other keys are skipped unread.
func Fields(r io.Reader, keys ...string) (map[string]uint64, error) {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	out := make(map[string]uint64, len(keys))
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || !want[key] {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil, fmt.Errorf("%s: no value", key)
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", key, f[0])
		}
		if len(f) > 1 && f[1] == "kB" {
			v <<= 10
		}
		out[key] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// FileFields is Fields of the file at path, its errors prefixed with the
// path.
func FileFields(path string, keys ...string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Fields(f, keys...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Meminfo is what /proc/meminfo says of the machine's memory, in bytes.
type Meminfo struct {
	Total uint64
	// Available is MemAvailable: what could be given to a new process
	// without swapping, page cache included; MemFree on kernels before
	// 3.14, which lack it.
	Available uint64
}

// ParseMeminfo reads MemTotal and MemAvailable (or MemFree) from the text
// of /proc/meminfo.
func ParseMeminfo(r io.Reader) (Meminfo, error) {
	f, err := Fields(r, "MemTotal", "MemAvailable", "MemFree")
	if err != nil {
		return Meminfo{}, fmt.Errorf("meminfo: %w", err)
	}
	total, ok := f["MemTotal"]
	if !ok {
		return Meminfo{}, fmt.Errorf("meminfo: no MemTotal line")
	}
	avail, ok := f["MemAvailable"]
	if !ok {
		avail = f["MemFree"]
	}
	return Meminfo{Total: total, Available: avail}, nil
}

// ReadMeminfo is ParseMeminfo of /proc/meminfo.
func ReadMeminfo() (Meminfo, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return Meminfo{}, err
	}
	defer f.Close()
	return ParseMeminfo(f)
}
