package supervise

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestReapStale(t *testing.T) {
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	// A process left behind by a dead host, and one that is not ours under a
	// pid file that names another executable (a reused pid): only the first dies.
	stale := exec.Command(sleep, "60")
	other := exec.Command(sleep, "60")
	for _, c := range []*exec.Cmd{stale, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer c.Process.Kill()
	}
	waited := make(chan struct{})
	go func() { stale.Wait(); close(waited) }()
	if err := writePidFile(dir, "dev0", stale.Process.Pid, sleep); err != nil {
		t.Fatal(err)
	}
	if err := writePidFile(dir, "dev1", other.Process.Pid, "/usr/bin/zkhost-backend-cpu"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "garbage"), []byte("x"), 0o600)
	killed, err := ReapStale(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(killed) != 1 || killed[0] != stale.Process.Pid {
		t.Fatalf("killed %v, want [%d]", killed, stale.Process.Pid)
	}
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the stale process still runs")
	}
	if !runs(other.Process.Pid, sleep) {
		t.Fatal("a process whose pid file named another executable was killed")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("pid files left: %v", left)
	}
	if killed, err := ReapStale(filepath.Join(dir, "missing")); err != nil || len(killed) != 0 {
		t.Fatalf("missing dir: %v %v", killed, err)
	}
}
