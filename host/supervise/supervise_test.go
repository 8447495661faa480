package supervise

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkhost/zkhost/sdk/plugins"
)

// fakeProc is a process that exits when told to.
type fakeProc struct {
	pid    int
	exited atomic.Bool
	killed atomic.Bool
}

func (p *fakeProc) Pid() int     { return p.pid }
func (p *fakeProc) Exited() bool { return p.exited.Load() }
func (p *fakeProc) Kill()        { p.killed.Store(true); p.exited.Store(true) }

// plugin hands the supervisor fake processes, numbered from 1, and fails the
// starts it is told to fail.
type plugin struct {
	mu    sync.Mutex
	procs []*fakeProc
	fail  error
}

func (f *plugin) start(context.Context) (Process, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, 0, f.fail
	}
	p := &fakeProc{pid: 1000 + len(f.procs)}
	f.procs = append(f.procs, p)
	return p, len(f.procs), nil
}

func (f *plugin) last() *fakeProc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[len(f.procs)-1]
}

func (f *plugin) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func startFake(t *testing.T, f *plugin, cfg Config[int]) *Supervisor[int] {
	t.Helper()
	cfg.Kind, cfg.Name, cfg.Path = plugins.KindBackend, "dev0", "/bin/fake"
	cfg.Start = f.start
	cfg.PollInterval = time.Millisecond
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, 5*time.Millisecond
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// waitFor polls s until cond holds, or fails the test after a minute.
func waitFor(t *testing.T, s *Supervisor[int], what string, cond func(Status[int]) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond(s.Status()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %+v", what, s.Status())
		}
		time.Sleep(time.Millisecond)
	}
}

func current(t *testing.T, s *Supervisor[int]) (Lease[int], error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	return s.Current(ctx)
}

// TestRestartAfterExit: an exit ends the lease on the dead process, is
// counted, records the pid files, and a new process serves.
func TestRestartAfterExit(t *testing.T) {
	pidDir := t.TempDir()
	f := &plugin{}
	forgot := atomic.Int32{}
	s := startFake(t, f, Config[int]{Policy: Policy{PidDir: pidDir}, Forget: func() { forgot.Add(1) }})
	lease, err := current(t, s)
	if err != nil || lease.Client != 1 {
		t.Fatalf("Current: %+v %v, want the first process", lease, err)
	}
	pidFile := filepath.Join(pidDir, "dev0-"+strconv.Itoa(f.last().pid))
	if data, err := os.ReadFile(pidFile); err != nil || string(data) != "/bin/fake\n" {
		t.Fatalf("pid file: %q %v", data, err)
	}
	f.last().exited.Store(true)
	select {
	case <-lease.Alive.Done():
	case <-time.After(time.Minute):
		t.Fatal("the lease on the exited process did not end")
	}
	waitFor(t, s, "a second process to serve", func(st Status[int]) bool {
		return st.State == Ready && st.Restarts == 1 && st.Latest == 2
	})
	st := s.Status()
	if st.Crashes != 1 || st.LastError != "backend process exited" || st.Pid != 1001 {
		t.Errorf("after an exit: %+v", st)
	}
	if forgot.Load() != 1 {
		t.Errorf("Forget called %d times, want once", forgot.Load())
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the exited process's pid file is still there: %v", err)
	}
	if lease, err := current(t, s); err != nil || lease.Client != 2 || lease.Gen == 1 {
		t.Errorf("Current after the restart: %+v %v", lease, err)
	}
	if noticed, _ := s.ExitNoticed(1); !noticed {
		t.Error("ExitNoticed(1) is false after generation 1 was replaced")
	}
}

// TestCrashWindow: CrashLimit exits within the window take the plugin out of
// service; it comes back when the window has passed, or at once when enabled.
func TestCrashWindow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window time.Duration
		enable bool
	}{
		{"the window passes", time.Second, false},
		{"enabled", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &plugin{}
			s := startFake(t, f, Config[int]{Policy: Policy{CrashLimit: 2, CrashWindow: tc.window}})
			f.last().exited.Store(true)
			waitFor(t, s, "the first restart", func(st Status[int]) bool { return st.State == Ready && st.Restarts == 1 })
			f.last().exited.Store(true)
			waitFor(t, s, "out of service", func(st Status[int]) bool { return st.State == Unhealthy })
			if _, err := current(t, s); !errors.Is(err, ErrUnhealthy) || errors.Is(err, ErrCrashed) {
				t.Fatalf("Current out of service: %v, want ErrUnhealthy (and not ErrCrashed)", err)
			}
			if tc.enable {
				s.Enable()
			}
			waitFor(t, s, "back in service", func(st Status[int]) bool { return st.State == Ready && st.Restarts == 2 })
			if _, err := current(t, s); err != nil {
				t.Fatalf("Current back in service: %v", err)
			}
		})
	}
}

// TestDown: restarts that fail make the plugin down, with the cause; calls
// fail at once with FailWhileDown and wait otherwise; a start that works
// again serves.
func TestDown(t *testing.T) {
	for _, failWhileDown := range []bool{true, false} {
		t.Run("FailWhileDown="+strconv.FormatBool(failWhileDown), func(t *testing.T) {
			f := &plugin{}
			s := startFake(t, f, Config[int]{FailWhileDown: failWhileDown})
			f.setFail(errors.New("binary gone"))
			f.last().exited.Store(true)
			waitFor(t, s, "down", func(st Status[int]) bool { return st.State == Down && st.StartFailures > 0 })
			if st := s.Status(); st.LastError != "binary gone" {
				t.Errorf("last error %q, want the start's", st.LastError)
			}
			_, err := current(t, s)
			if failWhileDown && (!errors.Is(err, ErrNotServing) || err.Error() != ErrNotServing.Error()+": binary gone") {
				t.Errorf("Current while down: %v, want ErrNotServing with the cause", err)
			}
			if !failWhileDown && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Current while down: %v, want it to wait out its context", err)
			}
			f.setFail(nil)
			waitFor(t, s, "serving again", func(st Status[int]) bool { return st.State == Ready && st.StartFailures == 0 })
		})
	}
}

// TestKill: a killed process's lease ends at once and calls wait for the
// next process; the kill's reason stays the last error.
func TestKill(t *testing.T) {
	f := &plugin{}
	s := startFake(t, f, Config[int]{})
	lease, err := current(t, s)
	if err != nil {
		t.Fatal(err)
	}
	p := f.last()
	s.Kill("did not answer within 1s; killed")
	if lease.Alive.Err() == nil {
		t.Error("the lease on the killed process did not end")
	}
	if !p.killed.Load() {
		t.Error("the process was not killed")
	}
	waitFor(t, s, "a new process", func(st Status[int]) bool { return st.State == Ready && st.Restarts == 1 })
	if st := s.Status(); st.LastError != "did not answer within 1s; killed" {
		t.Errorf("last error %q, want the kill's reason", st.LastError)
	}
}

// TestCloseDuringRestart: a process that finishes starting after Close is
// killed, not left running with no one to stop it.
func TestCloseDuringRestart(t *testing.T) {
	pidDir := t.TempDir()
	f := &plugin{}
	var s *Supervisor[int]
	restarting := make(chan struct{})
	late := &fakeProc{pid: 2000}
	first := true
	start := func(ctx context.Context) (Process, int, error) {
		if first {
			first = false
			return f.start(ctx)
		}
		close(restarting)
		for s.State() != Stopped {
			time.Sleep(time.Millisecond)
		}
		return late, 2, nil
	}
	s, err := Start(context.Background(), Config[int]{Kind: plugins.KindSynthesizer, Name: "synth.x", Path: "/bin/fake",
		Start: start, Policy: Policy{PidDir: pidDir, PollInterval: time.Millisecond, BackoffBase: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	f.last().exited.Store(true)
	<-restarting
	s.Close()
	if !late.killed.Load() {
		t.Error("a process started while the supervisor closed is left running")
	}
	if left, _ := os.ReadDir(pidDir); len(left) != 0 {
		t.Errorf("pid files left after Close: %v", left)
	}
	if _, err := s.Current(context.Background()); !errors.Is(err, ErrStopped) {
		t.Errorf("Current after Close: %v, want ErrStopped", err)
	}
	if st := s.State(); st != Stopped {
		t.Errorf("state %v after Close", st)
	}
}
