package cpubackend

import (
	"bufio"
	"io"
	"strings"

	"github.com/zkhost/zkhost/sdk/procfs"
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
	m, err := procfs.ParseMeminfo(r)
	return m.Total, m.Available, err
}
