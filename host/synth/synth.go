package synth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/device"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/plugins"
)

// ErrCrashed is returned (wrapped) by calls that were in flight when the
// synthesizer process exited or was killed, and by calls made while it
// restarts. The partition may be retried.
var ErrCrashed = errors.New("synthesizer process exited")

// ErrUnhealthy is returned (wrapped) while the synthesizer is out of service
// after crashing CrashLimit times within CrashWindow.
var ErrUnhealthy = errors.New("synthesizer out of service")

// ErrStopped is returned by calls after Close.
var ErrStopped = errors.New("synthesizer stopped")

// Options configures a Synth.
type Options struct {
	// Name is the synthesizer's name in logs, status and its pid file
	// ("synth.cuberoot").
	Name string
	// Launch says which binary to start and how; its Kind is set to
	// plugins.KindSynthesizer.
	Launch plugins.LaunchConfig
	// Circuit is loaded into every process started.
	Circuit sdk.CircuitRef
	// BackoffBase and BackoffMax bound the delay before a restart; it doubles
	// after each consecutive crash. Defaults 200ms and 30s.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// CrashLimit crashes within CrashWindow take the synthesizer out of service
	// until the window has passed; 0 never does.
	CrashLimit  int
	CrashWindow time.Duration
	// PollInterval is how often the process is checked for exit; default 50ms.
	PollInterval time.Duration
	// Logger is the synthesizer's logger; the process's stderr goes to it.
	Logger hclog.Logger
	// PidDir, when set, holds a pid file per running process (as backends'), so
	// a host that starts after a crash reaps it (device.ReapStale).
	PidDir string
}

// Info is a snapshot of a synthesizer for status and logs.
type Info struct {
	Name        string
	Path        string
	Description sdk.SynthDescription
	Ready       bool
	Unhealthy   bool
	InFlight    int
	Restarts    int
	Crashes     int // within the crash window
	Pid         int
	LastError   string
}

// Synth is one supervised synthesizer process.
type Synth struct {
	opts Options
	log  hclog.Logger

	mu        sync.Mutex
	proc      *plugins.Process
	client    sdk.Synthesizer
	desc      sdk.SynthDescription
	procCtx   context.Context    // ends when the current process exits
	procStop  context.CancelFunc //
	readyCh   chan struct{}      // closed while a process serves; replaced on exit
	killing   bool               // the current process is being killed; calls wait for the next
	unhealthy bool
	inFlight  int
	restarts  int
	crashes   []time.Time
	lastErr   string
	slots     chan struct{} // one token per call the first process said it takes at once
	stopped   bool
	stopCh    chan struct{}
	superDone chan struct{}
}

// Start launches the synthesizer, checks its Describe and loads the circuit,
// so a missing binary, a bad checksum, a binary of the wrong kind or a circuit
// it refuses is reported here with its cause. After Start the synthesizer
// supervises itself until Close.
func Start(ctx context.Context, opts Options) (*Synth, error) {
	if opts.Name == "" {
		opts.Name = "synth"
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 200 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	opts.Launch.Kind = plugins.KindSynthesizer
	s := &Synth{
		opts:      opts,
		log:       opts.Logger,
		readyCh:   make(chan struct{}),
		stopCh:    make(chan struct{}),
		superDone: make(chan struct{}),
	}
	if err := s.launch(ctx, false); err != nil {
		return nil, fmt.Errorf("synthesizer %s: %w", opts.Name, err)
	}
	s.slots = make(chan struct{}, max(1, s.desc.MaxInFlight))
	go s.supervise()
	return s, nil
}

// launch starts one process, describes it and loads the circuit; restart says
// it replaces one that exited, and is counted when the new one serves.
func (s *Synth) launch(ctx context.Context, restart bool) error {
	lc := s.opts.Launch
	if lc.Logger == nil {
		lc.Logger = s.log.Named("plugin")
	}
	proc, err := plugins.Launch(ctx, lc)
	if err != nil {
		return err
	}
	client := proc.Synthesizer()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	desc, err := client.Describe(cctx)
	if err != nil {
		proc.Kill()
		if sdk.KindOf(err) == sdk.ErrUnimplemented {
			return fmt.Errorf("describe %s: %w (is it a synthesizer? it does not serve the synthesizer service; a backend binary serves another)", lc.Path, err)
		}
		return fmt.Errorf("describe %s: %w", lc.Path, err)
	}
	if err := checkDescription(desc, s.opts.Circuit.Curve); err != nil {
		proc.Kill()
		return fmt.Errorf("synthesizer %s: %w", lc.Path, err)
	}
	if err := client.LoadCircuit(cctx, s.opts.Circuit); err != nil {
		proc.Kill()
		return fmt.Errorf("synthesizer %s: loading circuit %s: %w", lc.Path, s.opts.Circuit.ID, err)
	}
	if err := device.WritePidFile(s.opts.PidDir, s.opts.Name, proc.Pid(), lc.Path); err != nil {
		s.log.Warn("recording the synthesizer's pid", "error", err)
	}
	pctx, pstop := context.WithCancel(context.Background())
	s.mu.Lock()
	s.proc, s.client, s.desc = proc, client, desc
	s.procCtx, s.procStop = pctx, pstop
	if restart {
		s.restarts++ // before a call can see the new process
	}
	close(s.readyCh)
	s.mu.Unlock()
	s.log.Info("synthesizer ready", "name", desc.Name, "version", desc.Version, "circuit", s.opts.Circuit.ID,
		"max_in_flight", desc.MaxInFlight, "pid", proc.Pid())
	return nil
}

// checkDescription rejects a synthesizer this host cannot use for curve.
func checkDescription(desc sdk.SynthDescription, curve sdk.Curve) error {
	okVersion := false
	for _, v := range desc.APIVersions {
		okVersion = okVersion || v == sdk.SynthAPIVersion
	}
	if !okVersion {
		return fmt.Errorf("speaks synthesizer API versions %v, this host speaks %d", desc.APIVersions, sdk.SynthAPIVersion)
	}
	if desc.MaxInFlight < 1 {
		return fmt.Errorf("declares max in flight %d, need at least 1", desc.MaxInFlight)
	}
	for _, c := range desc.Curves {
		if c == curve {
			return nil
		}
	}
	return fmt.Errorf("supports curves %v, the circuit is %s", desc.Curves, curve)
}

// supervise watches the process and restarts it after it exits.
func (s *Synth) supervise() {
	defer close(s.superDone)
	device.SuperviseLoop(device.Supervision{
		Stop: s.stopCh, PollInterval: s.opts.PollInterval,
		BackoffBase: s.opts.BackoffBase, BackoffMax: s.opts.BackoffMax,
		Exited: func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.proc != nil && s.proc.Exited()
		},
		OnExit: func() bool {
			unhealthy := s.onExit()
			if unhealthy {
				s.log.Error("synthesizer crashed too often; out of service until the crash window passes", "crashes", s.opts.CrashLimit, "window", s.opts.CrashWindow)
			}
			return unhealthy
		},
		WaitHealthy: s.waitHealthy,
		Restart:     func(ctx context.Context) error { return s.launch(ctx, true) },
		RestartFailed: func(err error, retryIn time.Duration) {
			s.log.Error("synthesizer restart failed", "error", err, "retry_in", retryIn)
			s.mu.Lock()
			s.lastErr = err.Error()
			s.mu.Unlock()
		},
	})
}

// onExit records an exit, ends the calls in flight and reports whether the
// synthesizer is now out of service.
func (s *Synth) onExit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.crashes = append(s.crashes, now)
	s.pruneCrashes(now)
	s.log.Warn("synthesizer process exited", "pid", s.proc.Pid(), "crashes_in_window", len(s.crashes))
	if !s.killing {
		// Exited on its own; a process the host killed keeps the reason kill gave.
		s.lastErr = "synthesizer process exited"
	}
	s.procStop()
	s.proc.Kill()
	device.RemovePidFile(s.opts.PidDir, s.opts.Name, s.proc.Pid())
	s.proc, s.client, s.killing = nil, nil, false
	s.readyCh = make(chan struct{})
	if s.opts.CrashLimit > 0 && len(s.crashes) >= s.opts.CrashLimit {
		s.unhealthy = true
	}
	return s.unhealthy
}

func (s *Synth) pruneCrashes(now time.Time) {
	if s.opts.CrashWindow <= 0 {
		return
	}
	i := 0
	for i < len(s.crashes) && now.Sub(s.crashes[i]) > s.opts.CrashWindow {
		i++
	}
	s.crashes = s.crashes[i:]
}

// waitHealthy blocks until the crash window has passed; false when stopped.
func (s *Synth) waitHealthy() bool {
	for {
		select {
		case <-s.stopCh:
			return false
		case <-time.After(s.opts.PollInterval * 4):
		}
		s.mu.Lock()
		s.pruneCrashes(time.Now())
		ok := len(s.crashes) < s.opts.CrashLimit
		if ok {
			s.unhealthy = false
		}
		s.mu.Unlock()
		if ok {
			return true
		}
	}
}

// current waits for a serving process and returns its client and the context
// that ends when it exits.
func (s *Synth) current(ctx context.Context) (sdk.Synthesizer, context.Context, error) {
	for {
		s.mu.Lock()
		switch {
		case s.stopped:
			s.mu.Unlock()
			return nil, nil, ErrStopped
		case s.unhealthy:
			s.mu.Unlock()
			return nil, nil, fmt.Errorf("synthesizer %s crashed %d times within %s: %w", s.opts.Name, s.opts.CrashLimit, s.opts.CrashWindow, ErrUnhealthy)
		case s.client != nil && !s.killing && !s.proc.Exited():
			c, pctx := s.client, s.procCtx
			s.mu.Unlock()
			return c, pctx, nil
		}
		ready := s.readyCh
		if s.proc != nil {
			// Exited (or being killed), not yet noticed by the supervisor:
			// poll rather than hand the call to a dead process.
			ready = nil
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-s.stopCh:
			return nil, nil, ErrStopped
		case <-ready:
		case <-time.After(s.opts.PollInterval):
		}
	}
}

// MaxInFlight is how many Synthesize calls the synthesizer takes at once (as
// its first process declared); more calls wait for a turn.
func (s *Synth) MaxInFlight() int { return cap(s.slots) }

// Synthesize asks the synthesizer to write one partition of the circuit to out.
// It waits for a turn (MaxInFlight) and for a serving process (through a restart); a call in flight when
// the process exits returns an error wrapping ErrCrashed. The synthesizer's own
// errors come back as *sdk.Error.
func (s *Synth) Synthesize(ctx context.Context, witness []byte, out sdk.PartitionHandle) (sdk.SynthesizeResult, error) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return sdk.SynthesizeResult{}, ctx.Err()
	}
	client, pctx, err := s.current(ctx)
	if err != nil {
		return sdk.SynthesizeResult{}, err
	}
	s.mu.Lock()
	s.inFlight++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(pctx, cancel)
	defer stop()
	res, err := client.Synthesize(cctx, sdk.SynthesizeRequest{CircuitID: s.opts.Circuit.ID, Witness: witness, Output: out})
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		return sdk.SynthesizeResult{}, ctx.Err()
	}
	if pctx.Err() != nil || errors.Is(err, sdk.ErrPluginShutdown) {
		// The connection broke because the process is dying: wait for the
		// supervisor to notice the exit (it ends pctx), so a caller that retries
		// at once finds the synthesizer restarting or out of service, not the
		// dead process.
		select {
		case <-pctx.Done():
		case <-time.After(40 * s.opts.PollInterval):
		}
		return sdk.SynthesizeResult{}, fmt.Errorf("%s: %w (%v)", s.opts.Name, ErrCrashed, err)
	}
	return sdk.SynthesizeResult{}, err
}

// Kill kills the process as a crash would (used by tests): the supervisor
// restarts it.
func (s *Synth) Kill() { s.kill("synthesizer killed by the host") }

// KillHung kills a synthesizer that did not answer within its deadline
// (stopped, hung or wedged). It is not ready from this moment, with reason as
// its last error, for as long as the kill takes (up to plugins.KillGrace and a
// SIGKILL for a process that does not let go); its calls in flight end with
// ErrCrashed and the supervisor restarts it once the process is gone.
func (s *Synth) KillHung(reason string) { s.kill(reason) }

// kill marks the current process as being killed for reason, ends its calls in
// flight and kills it.
func (s *Synth) kill(reason string) {
	s.mu.Lock()
	proc := s.proc
	if proc == nil || s.stopped {
		s.mu.Unlock()
		return
	}
	s.killing = true
	s.lastErr = reason
	if s.procStop != nil {
		s.procStop()
	}
	s.mu.Unlock()
	proc.Kill()
}

// Info returns a snapshot for status and logs.
func (s *Synth) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneCrashes(time.Now())
	info := Info{
		Name: s.opts.Name, Path: s.opts.Launch.Path, Description: s.desc, Ready: s.client != nil && !s.killing && !s.unhealthy,
		Unhealthy: s.unhealthy, InFlight: s.inFlight, Restarts: s.restarts, Crashes: len(s.crashes), LastError: s.lastErr,
	}
	if s.proc != nil {
		info.Pid = s.proc.Pid()
	}
	return info
}

// Close stops supervision and the process.
func (s *Synth) Close() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	close(s.stopCh)
	proc := s.proc
	if s.procStop != nil {
		s.procStop()
	}
	s.mu.Unlock()
	<-s.superDone
	if proc != nil {
		proc.Kill()
		device.RemovePidFile(s.opts.PidDir, s.opts.Name, proc.Pid())
	}
}
