package supervise

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Each running plugin process (a backend or a synthesizer) leaves a pid file in
// Config.PidDir (the daemon's <state_dir>/backends): NAME-PID holding the
// plugin's executable path. A clean stop removes it; a host killed with SIGKILL
// leaves it, and the next host reaps what it names (ReapStale). Plugins normally
// die with their host through the parent-death signal and the watchdog in
// sdk.Serve; the pid files catch the rest (a backend blocked in a driver call, a
// watchdog that never ran).

func pidFileName(dir, name string, pid int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d", name, pid))
}

// writePidFile records a started plugin process.
func writePidFile(dir, name string, pid int, exe string) error {
	if dir == "" || pid <= 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(pidFileName(dir, name, pid), []byte(exe+"\n"), 0o600)
}

// removePidFile forgets a plugin process that exited or was stopped.
func removePidFile(dir, name string, pid int) {
	if dir == "" || pid <= 0 {
		return
	}
	_ = os.Remove(pidFileName(dir, name, pid))
}

// ReapStale kills the plugin processes an earlier host of the same state
// directory left running, as its pid files in dir name them, and removes the
// files. A pid is killed only while its process still runs the executable the
// file names, so a reused pid is never touched. It returns the pids it killed.
func ReapStale(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var killed []int
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		i := strings.LastIndexByte(e.Name(), '-')
		pid, perr := strconv.Atoi(e.Name()[i+1:])
		data, rerr := os.ReadFile(path)
		if i < 0 || perr != nil || rerr != nil || pid <= 0 {
			_ = os.Remove(path)
			continue
		}
		if runs(pid, strings.TrimSpace(string(data))) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				killed = append(killed, pid)
				for j := 0; j < 50 && runs(pid, strings.TrimSpace(string(data))); j++ {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}
		_ = os.Remove(path)
	}
	return killed, nil
}

// runs reports whether process pid exists and executes exe.
func runs(pid int, exe string) bool {
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	link = strings.TrimSuffix(link, " (deleted)")
	want, err := filepath.EvalSymlinks(exe)
	if err != nil {
		want = exe
	}
	return link == want || link == exe
}
