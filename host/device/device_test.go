package device

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/supervise"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/procfs"
	"github.com/zkhost/zkhost/sdk/sdktest"
)

// fakeBackend is the SDK's fake backend (sdk/sdktest/testdata/fakebackend),
// built once by TestMain: a real plugin process the tests can stop.
var fakeBackend string

func TestMain(m *testing.M) {
	os.Exit(sdktest.MainWithFakeBackend(m, &fakeBackend))
}

// fakeOptions are a device's options on the fake backend, restarted quickly.
func fakeOptions() Options {
	return Options{Name: "fake0", Launch: plugins.LaunchConfig{Path: fakeBackend, StartTimeout: time.Minute},
		Policy: supervise.Policy{BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond}}
}

// startStopped starts a device on the fake backend and stops its process with
// SIGSTOP; the test never leaves it stopped.
func startStopped(t *testing.T) (*Device, int) {
	t.Helper()
	d, err := Start(context.Background(), fakeOptions())
	if err != nil {
		t.Fatal(err)
	}
	pid := d.Info().Pid
	// Cleanups run last first: the SIGKILL, registered after Close, runs before
	// it, so a test that fails never leaves Close waiting on a stopped process.
	t.Cleanup(d.Close)
	t.Cleanup(func() {
		// Only while it is still stopped: once gone, its pid may be another's.
		if procState(pid) == 'T' {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	sigstop(t, pid)
	return d, pid
}

// waitState polls the device until cond holds, or fails the test after within.
func waitState(t *testing.T, d *Device, within time.Duration, what string, cond func(Info) bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond(d.Info()) {
		if time.Now().After(deadline) {
			t.Fatalf("after %s, %s: %+v", within, what, d.Info())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// bound is how long a kill of a stopped backend may take on a loaded machine:
// the graceful kill's grace, then SIGKILL ends it at once.
const bound = plugins.KillGrace + time.Minute

// TestKillHungStoppedBackend kills a backend stopped with SIGSTOP while a proof
// is in flight on it: the device says restarting with the reason at once, the
// proof ends with ErrCrashed without waiting for the kill, and the backend is
// replaced.
func TestKillHungStoppedBackend(t *testing.T) {
	d, pid := startStopped(t)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil { // to load the key
		t.Fatal(err)
	}
	key := sdk.KeyRef{ID: "block", Path: "unused"}
	if _, err := d.LoadKey(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	proved := make(chan error, 1)
	go func() {
		_, err := d.Prove(context.Background(), key, sdk.PartitionHandle{})
		proved <- err
	}()
	waitState(t, d, bound, "the proof to be in flight", func(i Info) bool { return i.InFlight == 1 })
	sigstop(t, pid)
	killed := make(chan struct{})
	go func() {
		d.KillHung("backend did not answer a proof within 1s; killed")
		close(killed)
	}()
	waitState(t, d, bound, "the device to show restarting with the reason", func(i Info) bool {
		return i.State == StateRestarting && i.LastError == "backend did not answer a proof within 1s; killed"
	})
	select {
	case err := <-proved:
		if !errors.Is(err, ErrCrashed) {
			t.Errorf("the proof in flight ended with %v, want ErrCrashed", err)
		}
	case <-time.After(bound):
		t.Fatal("the proof in flight on the stopped backend did not end")
	}
	select {
	case <-killed:
	case <-time.After(bound):
		t.Fatalf("KillHung of a stopped backend did not return within %s", bound)
	}
	waitState(t, d, bound, "a new backend to serve", func(i Info) bool {
		return i.State == StateReady && i.Restarts == 1 && i.Pid != pid
	})
	if i := d.Info(); i.LastError != "backend did not answer a proof within 1s; killed" {
		t.Errorf("last error %q, want the kill's reason", i.LastError)
	}
}

// TestEvictIdleStoppedBackend unloads an idle key from a stopped backend: the
// unload is bounded, and the backend that did not answer it is killed and
// replaced.
func TestEvictIdleStoppedBackend(t *testing.T) {
	old := controlCallTimeout
	controlCallTimeout = time.Second
	t.Cleanup(func() { controlCallTimeout = old })
	d, pid := startStopped(t)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil { // to load the key
		t.Fatal(err)
	}
	if _, err := d.LoadKey(context.Background(), sdk.KeyRef{ID: "k", Path: "unused"}); err != nil {
		t.Fatal(err)
	}
	sigstop(t, pid)
	done := make(chan []string, 1)
	go func() { done <- d.EvictIdle(context.Background(), time.Nanosecond) }()
	select {
	case ids := <-done:
		if len(ids) != 0 {
			t.Errorf("EvictIdle says it evicted %v from a stopped backend", ids)
		}
	case <-time.After(bound):
		t.Fatalf("EvictIdle on a stopped backend did not return within %s", bound)
	}
	waitState(t, d, bound, "a new backend to serve", func(i Info) bool {
		return i.State == StateReady && i.Restarts == 1 && i.Pid != pid
	})
}

// TestCloseStoppedBackend closes a device whose backend is stopped: Close
// returns within its bound and the process is gone.
func TestCloseStoppedBackend(t *testing.T) {
	d, pid := startStopped(t)
	closed := make(chan struct{})
	go func() {
		d.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(bound):
		t.Fatalf("Close with a stopped backend did not return within %s", bound)
	}
	if st := procState(pid); st != 0 && st != 'Z' && st != 'X' {
		t.Errorf("the stopped backend (pid %d) outlived Close (state %c)", pid, st)
	}
}

// sigstop stops pid with SIGSTOP and waits until every thread of it is
// stopped (procfs.Stopped says why).
func sigstop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !procfs.Stopped("/proc", pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d not stopped 30 s after SIGSTOP (state %c)", pid, procState(pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// procState returns the state letter of process pid in /proc ('T' stopped,
// 'Z' a zombie), or 0 when there is no such process.
func procState(pid int) byte {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0
	}
	return stat[i+2]
}

// TestCompactRefusedBeforeTheBackend: a compact partition for a key the
// backend loaded without taking its constraints (the fake backend takes
// none) is refused by the device layer with ErrCompactRefused, so the daemon
// synthesizes it again in full; a full partition goes to the backend as ever.
func TestCompactRefusedBeforeTheBackend(t *testing.T) {
	d, err := Start(context.Background(), fakeOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	key := sdk.KeyRef{ID: "plain", Path: "unused"}
	_, err = d.Prove(context.Background(), key, sdk.PartitionHandle{Format: sdk.FormatCompactW})
	if !errors.Is(err, ErrCompactRefused) {
		t.Fatalf("a compact partition for a key without constraints: %v, want ErrCompactRefused", err)
	}
	// A full partition reaches the backend, which refuses the empty handle
	// itself (invalid argument), not as compact.
	if _, err := d.Prove(context.Background(), key, sdk.PartitionHandle{}); errors.Is(err, ErrCompactRefused) || sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Fatalf("a full partition: %v, want the backend's invalid argument", err)
	}
}

// TestAcceptAtEveryStart: Options.Accept checks the backend's Describe at the
// first start, where a refusal fails Start with its reason, and again at every
// restart, so a backend replaced between two starts is checked too.
func TestAcceptAtEveryStart(t *testing.T) {
	opts := fakeOptions()
	opts.Accept = func(desc sdk.Description) error { return fmt.Errorf("backend %s refused", desc.Name) }
	if d, err := Start(context.Background(), opts); err == nil {
		d.Close()
		t.Fatal("Start with an Accept that refuses every backend succeeded")
	} else if !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Start: %v, want Accept's refusal", err)
	}

	var mu sync.Mutex
	checks := 0
	opts.Accept = func(sdk.Description) error {
		mu.Lock()
		defer mu.Unlock()
		checks++
		return nil
	}
	d, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	pid := d.Info().Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitState(t, d, bound, "a new backend to serve", func(i Info) bool {
		return i.State == StateReady && i.Restarts == 1 && i.Pid != pid
	})
	mu.Lock()
	defer mu.Unlock()
	if checks != 2 {
		t.Errorf("Accept was called %d times over a start and a restart, want 2", checks)
	}
}
