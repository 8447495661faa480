package cpubackend

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseCPUModel returns the first "model name" of a /proc/cpuinfo, or "" when there
// is none (some ARM kernels do not report one).
func parseCPUModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// parseMeminfo returns MemTotal and MemAvailable (MemFree on kernels before 3.14) of
// a /proc/meminfo, in bytes.
func parseMeminfo(r io.Reader) (total, free uint64, err error) {
	fields := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(value)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("meminfo: %s: %q is not a number", key, f[0])
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		fields[key] = n
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("meminfo: %w", err)
	}
	total, ok := fields["MemTotal"]
	if !ok {
		return 0, 0, fmt.Errorf("meminfo: no MemTotal line")
	}
	free, ok = fields["MemAvailable"]
	if !ok {
		free = fields["MemFree"]
	}
	return total, free, nil
}
