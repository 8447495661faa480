package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zkhost/zkhost/host/daemon"
	"github.com/zkhost/zkhost/host/inprocess"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
)

// StandaloneOptions configure a daemon started in this process for a benchmark:
// the daemon's own options (inprocess.Options) and the example circuit whose
// keys are generated into KeyDir when missing.
type StandaloneOptions struct {
	// Spec is the circuit the daemon serves, under the name Spec.ID(), unless
	// Options.Circuit names a key already in KeyDir (an imported one, say):
	// then that is served and Spec is not used.
	Spec circuits.Spec
	inprocess.Options
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
	if o.Options.Circuit == "" {
		if _, err := EnsureKeys(o.Spec, o.KeyDir); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		o.Options.Circuit = o.Spec.ID()
	}
	d, err := inprocess.Start(ctx, o.Options)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return &Standalone{Daemon: d.Daemon, Circuit: o.Options.Circuit, proc: d}, nil
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
