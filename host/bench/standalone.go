package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/daemon"
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
// directory.
type Standalone struct {
	// Daemon is the running daemon.
	Daemon *daemon.Daemon
	// Circuit is the name its circuit is served under.
	Circuit  string
	stateDir string
	cancel   context.CancelFunc
	done     chan error
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
	stateDir, err := os.MkdirTemp("", "zkhost-bench-")
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse([]byte(standaloneTOML(o, stateDir)), "bench (built in)")
	if err != nil {
		os.RemoveAll(stateDir)
		return nil, fmt.Errorf("bench: config: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	d, err := daemon.New(ctx, cfg, log)
	if err != nil {
		os.RemoveAll(stateDir)
		return nil, fmt.Errorf("bench: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Standalone{Daemon: d, Circuit: o.Spec.ID(), stateDir: stateDir, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- d.Run(runCtx) }()
	return s, nil
}

// standaloneTOML is the daemon's config: everything default but the state
// directory, the circuit, the devices and what o sets.
func standaloneTOML(o StandaloneOptions, stateDir string) string {
	q := strconv.Quote
	var b strings.Builder
	level := o.LogLevel
	if level == "" {
		level = "warn"
	}
	fmt.Fprintf(&b, "state_dir = %s\nlog_level = %s\n", q(stateDir), q(level))
	// The benchmark reads one timeline file: it is never rotated. Without
	// one the daemon writes none (its default would be in the state
	// directory).
	if o.Timeline != "" {
		fmt.Fprintf(&b, "[timeline]\npath = %s\nmax_size = 0\n", q(o.Timeline))
	} else {
		b.WriteString("[timeline]\nenabled = false\n")
	}
	if o.Workers > 0 || o.SynthCores > 0 || o.SolverThreads > 0 {
		b.WriteString("[synthesis]\n")
		if o.SynthCores > 0 {
			fmt.Fprintf(&b, "cores = %d\n", o.SynthCores)
		}
		if o.Workers > 0 {
			fmt.Fprintf(&b, "workers = %d\n", o.Workers)
		}
		if o.SolverThreads > 0 {
			fmt.Fprintf(&b, "threads = %d\n", o.SolverThreads)
		}
	}
	fmt.Fprintf(&b, "[[circuit]]\nname = %s\nkeys = %s\n", q(o.Spec.ID()), q(o.KeyDir))
	for i := range max(1, o.Devices) {
		fmt.Fprintf(&b, "[[device]]\nbackend = %s\nindex = %d\n", q(o.Backend), i)
		if o.InFlight > 0 {
			fmt.Fprintf(&b, "in_flight = %d\n", o.InFlight)
		}
		if o.InFlight > 0 || o.Threads > 0 {
			b.WriteString("[device.options]\n")
			if o.InFlight > 0 {
				fmt.Fprintf(&b, "max-in-flight = %s\n", q(strconv.Itoa(o.InFlight)))
			}
			if o.Threads > 0 {
				fmt.Fprintf(&b, "threads = %s\n", q(strconv.Itoa(o.Threads)))
			}
		}
	}
	return b.String()
}

// Target returns the daemon as a benchmark target.
func (s *Standalone) Target() Target { return ServiceTarget(s.Daemon) }

// Close stops the daemon (which flushes and closes its timeline) and removes
// its state directory.
func (s *Standalone) Close() error {
	s.cancel()
	err := <-s.done
	if rerr := os.RemoveAll(s.stateDir); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

// DefaultKeyDir is where standalone benchmarks cache keys:
// $XDG_CACHE_HOME/zkhost/keys, else ~/.cache/zkhost/keys.
func DefaultKeyDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "zkhost", "keys")
	}
	return filepath.Join(os.TempDir(), "zkhost-keys")
}
