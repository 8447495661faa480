package inprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/daemon"
)

// Options say what the daemon serves and with what.
type Options struct {
	// Circuit is the key set the daemon serves, under that name, from KeyDir
	// (KeyDir/Circuit.{ccs,vk,pk,json}).
	Circuit string
	KeyDir  string
	// Backend is the backend binary; Devices backends run it, with device
	// indices 0, 1, ... (0 means 1). BackendSHA256, when set, pins the binary.
	Backend       string
	BackendSHA256 config.Digest
	Devices       int
	// InFlight, above 0, is each device's partitions in flight; the backend is
	// told too (-max-in-flight).
	InFlight int
	// Threads, above 0, is passed to the backend as -threads.
	Threads int
	// BackendEnv is set in each backend's environment.
	BackendEnv map[string]string
	// Workers, above 0, sizes the synthesis pool; SynthCores, above 0, caps
	// the cores synthesis may use ([synthesis] cores); SolverThreads, above
	// 0, is each worker's solver threads.
	Workers       int
	SynthCores    int
	SolverThreads int
	// Timeline, when set, is the timeline file the daemon writes (never
	// rotated); empty writes none.
	Timeline string
	// LogLevel is the daemon's log level ("warn" when empty); Logger receives
	// its logs (nil: discarded).
	LogLevel string
	Logger   hclog.Logger
}

// Daemon is a daemon running in this process. Close it when done.
type Daemon struct {
	*daemon.Daemon
	stateDir string
	cancel   context.CancelFunc
	done     chan error
	closed   sync.Once
	closeErr error
}

// Start starts a daemon serving o.Circuit on o.Devices backends, in a new
// temporary state directory.
func Start(ctx context.Context, o Options) (*Daemon, error) {
	if o.Backend == "" {
		return nil, errors.New("no backend binary")
	}
	stateDir, err := os.MkdirTemp("", "zkhost-inprocess-")
	if err != nil {
		return nil, err
	}
	cfg, err := daemonConfig(o, stateDir)
	if err != nil {
		os.RemoveAll(stateDir)
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	d, err := daemon.New(ctx, cfg, log)
	if err != nil {
		os.RemoveAll(stateDir)
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Daemon{Daemon: d, stateDir: stateDir, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- d.Run(runCtx) }()
	return s, nil
}

// daemonConfig is the daemon's config: configTOML's, with the backend's pin,
// which is bytes already and goes in as it is, not through the text.
func daemonConfig(o Options, stateDir string) (*config.Config, error) {
	cfg, err := config.Parse([]byte(configTOML(o, stateDir)), "in-process daemon (built in)")
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	for i := range cfg.Devices {
		cfg.Devices[i].SHA256 = o.BackendSHA256
	}
	return cfg, nil
}

// configTOML is the text of the daemon's config: everything default but the
// state directory, the circuit, the devices and what o sets.
func configTOML(o Options, stateDir string) string {
	q := strconv.Quote
	var b strings.Builder
	level := o.LogLevel
	if level == "" {
		level = "warn"
	}
	fmt.Fprintf(&b, "state_dir = %s\nlog_level = %s\n", q(stateDir), q(level))
	// A caller reads one timeline file: it is never rotated. Without one the
	// daemon writes none (its default would be in the state directory).
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
	fmt.Fprintf(&b, "[[circuit]]\nname = %s\nkeys = %s\n", q(o.Circuit), q(o.KeyDir))
	envKeys := make([]string, 0, len(o.BackendEnv))
	for k := range o.BackendEnv {
		envKeys = append(envKeys, k)
	}
	sort.Strings(envKeys)
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
		if len(envKeys) > 0 {
			b.WriteString("[device.env]\n")
			for _, k := range envKeys {
				fmt.Fprintf(&b, "%s = %s\n", q(k), q(o.BackendEnv[k]))
			}
		}
	}
	return b.String()
}

// Close stops the daemon (which stops its backends, removes its shared-memory
// files, and flushes and closes its timeline) and removes its state directory.
// Later calls return the first one's error.
func (s *Daemon) Close() error {
	s.closed.Do(func() {
		s.cancel()
		s.closeErr = <-s.done
		if err := os.RemoveAll(s.stateDir); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}
