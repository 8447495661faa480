package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/daemon"
	"github.com/zkhost/zkhost/host/inprocess"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
)

// StandaloneOptions configure a daemon started in this process for a benchmark.
type StandaloneOptions struct {
	// Spec is the circuit the daemon serves, under the name Spec.ID().
	Spec circuits.Spec
	// KeyDir holds the circuit's keys; they are generated there (a development
	// setup) when missing.
	KeyDir string
	// Backend is the backend binary; Devices backends run it, with device
	// indices 0, 1, ... (0 means 1).
	Backend string
	Devices int
	// InFlight, above 0, is each device's partitions in flight; the backend is
	// told too (-max-in-flight).
	InFlight int
	// Threads, above 0, is passed to the backend as -threads.
	Threads int
	// Workers, above 0, sizes the synthesis pool; SynthCores, above 0, caps
	// the cores synthesis may use ([synthesis] cores); SolverThreads, above
	// 0, is each worker's solver threads.
	Workers       int
	SynthCores    int
	SolverThreads int
	// Timeline, when set, is the timeline file the daemon writes.
	Timeline string
	// LogLevel is the daemon's log level ("warn" when empty); Logger receives
	// its logs (nil: discarded).
	LogLevel string
	Logger   hclog.Logger
}

// Standalone is a daemon running in this process with a temporary state
// directory (host/inprocess).
type Standalone struct {
	// Daemon is the running daemon.
	Daemon *daemon.Daemon
	// Circuit is the name its circuit is served under.
	Circuit string
	proc    *inprocess.Daemon
}

// EnsureKeys generates spec's keys into dir unless they are there already, and
// reports whether it generated them.
func EnsureKeys(spec circuits.Spec, dir string) (bool, error) {
	_, _, pk, meta := circuit.Paths(dir, spec.ID())
	_, errPK := os.Stat(pk)
	_, errMeta := os.Stat(meta)
	if errPK == nil && errMeta == nil {
		return false, nil
	}
	if err := circuit.Keygen(spec, dir); err != nil && !errors.Is(err, circuit.ErrExists) {
		return false, fmt.Errorf("keygen %s into %s: %w", spec.ID(), dir, err)
	}
	return true, nil
}

// StartStandalone generates keys if needed and starts a daemon serving
// o.Spec. Close it when done.
func StartStandalone(ctx context.Context, o StandaloneOptions) (*Standalone, error) {
	if o.Backend == "" {
		return nil, errors.New("bench: no backend binary")
	}
	if _, err := os.Stat(o.Backend); err != nil {
		return nil, fmt.Errorf("bench: backend: %w (build it with `make build`, or name one with --backend)", err)
	}
	if o.KeyDir == "" {
		return nil, errors.New("bench: no key directory")
	}
	if _, err := EnsureKeys(o.Spec, o.KeyDir); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	d, err := inprocess.Start(ctx, inprocess.Options{
		Circuit: o.Spec.ID(), KeyDir: o.KeyDir, Backend: o.Backend, Devices: o.Devices, InFlight: o.InFlight, Threads: o.Threads,
		Workers: o.Workers, SynthCores: o.SynthCores, SolverThreads: o.SolverThreads, Timeline: o.Timeline,
		LogLevel: o.LogLevel, Logger: o.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &Standalone{Daemon: d.Daemon, Circuit: o.Spec.ID(), proc: d}, nil
}

// Target returns the daemon as a benchmark target.
func (s *Standalone) Target() Target { return ServiceTarget(s.Daemon) }

// Close stops the daemon (which flushes and closes its timeline) and removes
// its state directory.
func (s *Standalone) Close() error { return s.proc.Close() }

// DefaultKeyDir is where standalone benchmarks cache keys:
// $XDG_CACHE_HOME/zkhost/keys, else ~/.cache/zkhost/keys.
func DefaultKeyDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "zkhost", "keys")
	}
	return filepath.Join(os.TempDir(), "zkhost-keys")
}
