package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/zkhost/zkhost/sdk/procfs"
)

// environ is what defaults depend on. Parse reads it from the machine; tests
// give their own so that defaults are known.
type environ struct {
	// memTotal returns the RAM the daemon may use, in bytes.
	memTotal func() (uint64, error)
	cpus     int
	// executable returns the path of the running program; the default backend
	// sits next to it.
	executable func() (string, error)
	getenv     func(string) string
	homeDir    func() (string, error)
	workDir    func() (string, error)
}

func systemEnviron() environ {
	return environ{
		memTotal:   systemMemory,
		cpus:       runtime.NumCPU(),
		executable: os.Executable,
		getenv:     os.Getenv,
		homeDir:    os.UserHomeDir,
		workDir:    os.Getwd,
	}
}

// systemMemory returns MemTotal from /proc/meminfo, lowered to the cgroup's
// memory limit when one is set: in a container, 80% of the host's RAM would be
// more than the container may touch, and the OOM killer would find the daemon.
func systemMemory() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading RAM size: %w", err)
	}
	defer f.Close()
	total, err := parseMemInfo(f)
	if err != nil {
		return 0, err
	}
	if data, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if limit, ok := parseCgroupLimit(string(data)); ok && limit < total {
			total = limit
		}
	}
	return total, nil
}

// parseMemInfo finds "MemTotal: N kB" in the text of /proc/meminfo.
func parseMemInfo(f io.Reader) (uint64, error) {
	m, err := procfs.ParseMeminfo(f)
	if err != nil {
		return 0, fmt.Errorf("reading RAM size: %w", err)
	}
	return m.Total, nil
}

// parseCgroupLimit reads a cgroup v2 memory.max: a byte count, or "max".
func parseCgroupLimit(text string) (uint64, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
	return n, err == nil && n > 0
}

// defaultStateDir is $XDG_STATE_HOME/zkhost, or ~/.local/state/zkhost when
// XDG_STATE_HOME is unset or relative (the XDG spec says to ignore it then).
func (e environ) defaultStateDir() (string, error) {
	if x := e.getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "zkhost"), nil
	}
	home, err := e.homeDir()
	if err != nil || home == "" {
		return "", errors.New("no default: neither XDG_STATE_HOME nor HOME is set; set state_dir")
	}
	return filepath.Join(home, ".local", "state", "zkhost"), nil
}

// defaultBackend is the CPU backend installed next to the running program, or
// its bare name (found through PATH by the daemon) when the program's path is
// unknown.
func (e environ) defaultBackend() string {
	exe, err := e.executable()
	if err != nil || exe == "" {
		return DefaultBackendName
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Join(filepath.Dir(exe), DefaultBackendName)
}
