package synth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/host/supervise"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/shm"
)

// Made once by TestMain: examples/faultsynth, the CPU backend (a plugin of the
// other kind), and a chain key set.
var (
	faultSynth string
	cpuBackend string
	keys       string
	spec       circuits.Spec
)

func TestMain(m *testing.M) {
	logger.Disable()
	dir, err := os.MkdirTemp("", "synth-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code, err := setup(m, dir)
	os.RemoveAll(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "synth test:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M, dir string) (int, error) {
	faultSynth = filepath.Join(dir, "faultsynth")
	cpuBackend = filepath.Join(dir, "zkhost-backend-cpu")
	build := exec.Command("go", "build", "-o", dir+"/", "../../examples/faultsynth", "../../cmd/zkhost-backend-cpu")
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build: %v\n%s", err, out)
	}
	var err error
	if spec, err = circuits.Lookup("chain", map[string]int{"k": 4}); err != nil {
		return 0, err
	}
	keys = filepath.Join(dir, "keys")
	if err := circuit.Keygen(spec, keys); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// ref describes the chain key set as the daemon does.
func ref(t *testing.T) sdk.CircuitRef {
	t.Helper()
	c, err := circuit.Load(keys, spec.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ccs, _, _, _ := circuit.Paths(keys, spec.ID())
	data, err := os.ReadFile(ccs)
	if err != nil {
		t.Fatal(err)
	}
	return sdk.CircuitRef{
		ID: c.Name, Curve: sdk.CurveBLS12381, CCSPath: ccs, CCSSHA256: sha256.Sum256(data),
		NbWires: uint64(c.NbWires), NbConstraints: uint64(c.NbConstraints), NbPublic: uint64(c.NbPublic), NbSecret: uint64(c.NbSecret),
	}
}

// launcher writes a script that runs faultsynth with fault set.
func launcher(t *testing.T, fault string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "synth.sh")
	text := fmt.Sprintf("#!/bin/sh\nZKHOST_FAULT_SYNTH=%s exec %s\n", fault, faultSynth)
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func start(t *testing.T, path string, opts Options) (*Synth, error) {
	t.Helper()
	opts.Launch.Path = path
	opts.Circuit = ref(t)
	opts.PollInterval = 10 * time.Millisecond
	opts.BackoffBase = 10 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, opts)
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

// synthesize asks s for partition i of the chain circuit into a memfd made as
// the daemon makes it, and checks the host can adopt (seal) what was written.
func synthesize(t *testing.T, s *Synth, i int) error {
	t.Helper()
	w, err := spec.Witness(i, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r := s.opts.Circuit
	store := shm.NewStore()
	defer store.Close()
	out, err := store.Output(fmt.Sprintf("synth-test-%d", i), sdk.CurveBLS12381, r.NbWires, r.NbConstraints)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Synthesize(ctx, b, out); err != nil {
		return err
	}
	if _, err := store.Adopt(out); err != nil {
		t.Fatalf("adopting the partition: %v", err)
	}
	return nil
}

func TestSynthesizeAndRestart(t *testing.T) {
	pidDir := t.TempDir()
	s, err := start(t, faultSynth, Options{Name: "synth.chain", Policy: supervise.Policy{PidDir: pidDir}})
	if err != nil {
		t.Fatal(err)
	}
	if err := synthesize(t, s, 0); err != nil {
		t.Fatal(err)
	}
	first := s.Info().Pid
	if _, err := os.Stat(filepath.Join(pidDir, fmt.Sprintf("synth.chain-%d", first))); err != nil {
		t.Errorf("no pid file for the synthesizer: %v", err)
	}
	s.Kill()
	// The next call waits through the restart.
	if err := synthesize(t, s, 1); err != nil {
		t.Fatalf("Synthesize after a kill: %v", err)
	}
	info := s.Info()
	if info.Pid == first || info.Restarts != 1 || !info.Ready {
		t.Errorf("after a kill: %+v, want a new pid, one restart, ready", info)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(pidDir, fmt.Sprintf("synth.chain-%d", info.Pid))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pid file outlived Close: %v", err)
	}
}

func TestCrashes(t *testing.T) {
	s, err := start(t, launcher(t, "crash"), Options{Policy: supervise.Policy{CrashLimit: 2, CrashWindow: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	err = synthesize(t, s, 0)
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("Synthesize by a synthesizer that exits: %v, want ErrCrashed", err)
	}
	err = synthesize(t, s, 1)
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("second Synthesize: %v, want ErrCrashed", err)
	}
	// Two crashes within the window: out of service.
	deadline := time.Now().Add(10 * time.Second)
	for !s.Info().Unhealthy && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := synthesize(t, s, 2); !errors.Is(err, ErrUnhealthy) {
		t.Fatalf("Synthesize after %d crashes: %v, want ErrUnhealthy", s.opts.CrashLimit, err)
	}
}

func TestStartErrors(t *testing.T) {
	wrongSum := sha256.Sum256([]byte("not the binary"))
	tests := []struct {
		name string
		path string
		opts Options
		want string
	}{
		{"missing binary", filepath.Join(t.TempDir(), "nothing"), Options{}, "synthesizer binary"},
		{"checksum mismatch", faultSynth, Options{Launch: plugins.LaunchConfig{SHA256: wrongSum[:]}}, "checksum mismatch"},
		{"a backend binary", cpuBackend, Options{}, "is it a synthesizer?"},
		{"stdout before the handshake", launcher(t, "stdout"), Options{}, "Unrecognized remote plugin message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := start(t, tc.path, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	t.Run("circuit refused", func(t *testing.T) {
		opts := Options{Launch: plugins.LaunchConfig{Path: faultSynth}, Circuit: ref(t)}
		opts.Circuit.NbConstraints++
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := Start(ctx, opts)
		if err == nil || !strings.Contains(err.Error(), "loading circuit") || sdk.KindOf(err) != sdk.ErrInvalidArgument {
			t.Fatalf("Start with sizes that are not the circuit's: %v, want an invalid_argument loading the circuit", err)
		}
	})
}

// TestKillHungStoppedSynthesizer kills a synthesizer stopped with SIGSTOP (it
// never answers go-plugin's shutdown request): it is not ready from the kill on,
// with the reason as its last error, the kill returns once SIGKILL has ended
// the process, and the next call is served by a new one.
func TestKillHungStoppedSynthesizer(t *testing.T) {
	s, err := start(t, faultSynth, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.Info().Pid
	// Registered after start's Close, so it runs first: a failing test never
	// leaves Close waiting on a stopped process. Only while it is still
	// stopped: once gone, its pid may be another's.
	t.Cleanup(func() {
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(stat), ") T ") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const reason = "synthesizer did not answer within 1s; killed"
	killed := make(chan struct{})
	go func() {
		s.KillHung(reason)
		close(killed)
	}()
	bound := plugins.KillGrace + time.Minute
	deadline := time.Now().Add(bound)
	for info := s.Info(); info.Ready || info.LastError != reason; info = s.Info() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s the synthesizer being killed shows %+v, want not ready with the reason", bound, info)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-killed:
	case <-time.After(bound):
		t.Fatalf("KillHung of a stopped synthesizer did not return within %s", bound)
	}
	if err := synthesize(t, s, 0); err != nil {
		t.Fatalf("Synthesize after the kill: %v", err)
	}
	if info := s.Info(); info.Pid == pid || info.Restarts != 1 || !info.Ready || info.LastError != reason {
		t.Errorf("after the kill: %+v, want a new pid, one restart, ready, the kill's reason", info)
	}
}
