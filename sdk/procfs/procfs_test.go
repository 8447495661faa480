package procfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseMeminfo(t *testing.T) {
	for _, tt := range []struct {
		name             string
		in               string
		total, available uint64
		wantErr          string
	}{
		{"available", "MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    8192 kB\n", 16384 << 10, 8192 << 10, ""},
		{"old kernel", "MemTotal:       16384 kB\nMemFree:         1024 kB\n", 16384 << 10, 1024 << 10, ""},
		{"no total", "MemFree:         1024 kB\n", 0, 0, "no MemTotal"},
		{"garbage", "MemTotal:       lots kB\n", 0, 0, `MemTotal: "lots" is not a number`},
		{"empty value", "MemTotal:\n", 0, 0, "MemTotal: no value"},
		// Keys not asked for are not read.
		{"other garbage", "MemTotal: 4 kB\nHugetlb: x kB\nMemAvailable: 2 kB\n", 4 << 10, 2 << 10, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMeminfo(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || m.Total != tt.total || m.Available != tt.available {
				t.Errorf("got %+v, %v; want %d, %d", m, err, tt.total, tt.available)
			}
		})
	}
}

func TestFileFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	os.WriteFile(path, []byte("Name:\tzkhost\nVmRSS:\t  800 kB\nThreads:\t12\nRssShmem:\t  100 kB\n"), 0o644)
	f, err := FileFields(path, "VmRSS", "Threads", "RssShmem", "RssAnon")
	if err != nil {
		t.Fatal(err)
	}
	if f["VmRSS"] != 800<<10 || f["Threads"] != 12 || f["RssShmem"] != 100<<10 {
		t.Errorf("fields %v", f)
	}
	if _, ok := f["RssAnon"]; ok {
		t.Error("a key not in the file is in the map")
	}
	if _, err := FileFields(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("no error for a missing file")
	}
	// The real one, on Linux.
	if m, err := ReadMeminfo(); err != nil || m.Total == 0 || m.Available > m.Total {
		t.Errorf("ReadMeminfo = %+v, %v", m, err)
	}
}

func TestParseParent(t *testing.T) {
	for _, tc := range []struct {
		stat string
		ppid int
		ok   bool
	}{
		{"4242 (zkhost-backend) S 17 4242 17 0 -1", 17, true},
		// A command may hold spaces and parentheses: the last ')' ends it.
		{"4243 (a b) (c)) R 99 4243 99 0", 99, true},
		{"4244 (x) Z", 0, false},
		{"garbage", 0, false},
	} {
		ppid, ok := ParseParent([]byte(tc.stat))
		if ppid != tc.ppid || ok != tc.ok {
			t.Errorf("ParseParent(%q) = %d, %v; want %d, %v", tc.stat, ppid, ok, tc.ppid, tc.ok)
		}
	}
}

// TestChildren finds a process this test starts among its children, and
// this process's parent.
func TestChildren(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if kids := Children("/proc", os.Getpid()); !slices.Contains(kids, cmd.Process.Pid) {
		t.Fatalf("children %v do not hold sleep's pid %d", kids, cmd.Process.Pid)
	}
	if ppid, ok := Parent("/proc", cmd.Process.Pid); !ok || ppid != os.Getpid() {
		t.Errorf("Parent(sleep) = %d, %v; want %d", ppid, ok, os.Getpid())
	}
}

// TestStopped stops and continues a real process: Stopped follows it, and
// says false for a pid that does not exist.
func TestStopped(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	if Stopped("/proc", pid) {
		t.Fatal("a running process reads as stopped")
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !Stopped("/proc", pid) {
		if time.Now().After(deadline) {
			t.Fatal("a process sent SIGSTOP did not read as stopped within 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for Stopped("/proc", pid) {
		if time.Now().After(deadline) {
			t.Fatal("a continued process still reads as stopped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if Stopped(t.TempDir(), pid) {
		t.Error("a pid missing under root reads as stopped")
	}
	if s, ok := ParseState([]byte("12 (a) b) T 1 12")); !ok || s != 'T' {
		t.Errorf("ParseState of a command with a parenthesis = %c, %v; want T", s, ok)
	}
}
