// Package procfs reads what zkhost needs of Linux's /proc: the "Key: value"
// files that count memory (/proc/meminfo, /proc/PID/status) into byte
// counts, and a process's parent (/proc/PID/stat). The CPU backend sizes
// itself from /proc/meminfo, the host's budget defaults to a share of it,
// `zkhost bench` samples its backends' status files, and the end-to-end
// tests tell a host's backends from their workers: one parser serves them
// all. Beside it, CPUTime reads a process's CPU time from getrusage(2).
package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// ParseParent reads the parent pid from the text of a /proc/PID/stat: the
// field after the state, which follows the command in parentheses (a
// command may hold spaces and parentheses itself, so the last ')' ends it).
func ParseParent(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// Parent is the parent pid of process pid, from root/PID/stat (root is
// "/proc" but for tests).
func Parent(root string, pid int) (int, bool) {
	stat, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	return ParseParent(stat)
}

// Children lists the processes under root (normally "/proc") whose parent
// is pid.
func Children(root string, pid int) []int {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := Parent(root, child); ok && ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// ParseState reads the state letter (R, S, T, Z, ...) from the text of a
// /proc/PID/stat or /proc/PID/task/TID/stat: the field after the command.
func ParseState(stat []byte) (byte, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0, false
	}
	return stat[i+2], true
}

// Stopped reports whether every thread of process pid, under root (normally
// "/proc"), is stopped by a signal (state T or t). kill(2) only queues
// SIGSTOP: each thread stops when it next enters the kernel, so a process
// just sent one may still answer a call until Stopped says so.
func Stopped(root string, pid int) bool {
	dir := filepath.Join(root, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			return false
		}
		if s, ok := ParseState(stat); !ok || (s != 'T' && s != 't') {
			return false
		}
	}
	return true
}
