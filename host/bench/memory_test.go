package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/zkhost/zkhost/sdk/procfs"
)

func TestStatusFields(t *testing.T) {
	dir := t.TempDir()
	status := filepath.Join(dir, "status")
	os.WriteFile(status, []byte("Name:\tzkhost\nVmHWM:\t  900 kB\nVmRSS:\t  800 kB\nRssAnon:\t  500 kB\nRssFile:\t  200 kB\nRssShmem:\t  100 kB\n"), 0o644)
	m, err := procMemory(status)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ProcMemory{RSS: 800 << 10, Anon: 500 << 10, File: 200 << 10, Shmem: 100 << 10}); m != want {
		t.Errorf("procMemory = %+v, want %+v", m, want)
	}
	kthread := filepath.Join(dir, "kthread")
	os.WriteFile(kthread, []byte("Name:\tkworker\n"), 0o644)
	if _, err := procMemory(kthread); err == nil {
		t.Error("a status without VmRSS gave no error")
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("VmRSS:\t lots kB\n"), 0o644)
	if _, err := procMemory(bad); err == nil {
		t.Error("a VmRSS that is not a number gave no error")
	}
	meminfo := filepath.Join(dir, "meminfo")
	os.WriteFile(meminfo, []byte("MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    8192 kB\n"), 0o644)
	if used, err := machineUsed(meminfo); err != nil || used != 8192<<10 {
		t.Errorf("machineUsed = %d, %v", used, err)
	}
}

// TestChildMemory reads the memory of a child this test starts, found as the
// sampler finds backends.
func TestChildMemory(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	kids := procfs.Children("/proc", os.Getpid())
	if !slices.Contains(kids, cmd.Process.Pid) {
		t.Fatalf("children %v do not hold sleep's pid %d", kids, cmd.Process.Pid)
	}
	if _, err := procMemory(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "status")); err != nil {
		t.Fatal(err)
	}
}
