package synth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/supervise"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/plugins"
)

// The supervisor's errors, the same for both plugin kinds (see package
// supervise): ErrCrashed, wrapped, ends the calls in flight when the
// synthesizer process exited or was killed, and the calls made while it
// restarts (the partition may be retried); ErrUnhealthy, wrapped, the calls
// while it is out of service after crashing CrashLimit times within
// CrashWindow; ErrStopped, wrapped, the calls after Close.
var (
	ErrCrashed   = supervise.ErrCrashed
	ErrUnhealthy = supervise.ErrUnhealthy
	ErrStopped   = supervise.ErrStopped
)

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
	// Policy says how the process is kept running.
	supervise.Policy
	// Logger is the synthesizer's logger; the process's stderr goes to it.
	Logger hclog.Logger
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
	opts  Options
	log   hclog.Logger
	sup   *supervise.Supervisor[synthesizer]
	slots chan struct{} // one token per call the first process said it takes at once

	mu       sync.Mutex
	inFlight int
}

// synthesizer is what a start of the synthesizer process makes ready.
type synthesizer struct {
	client sdk.Synthesizer
	desc   sdk.SynthDescription
}

// Start launches the synthesizer, checks its Describe and loads the circuit,
// so a missing binary, a bad checksum, a binary of the wrong kind or a circuit
// it refuses is reported here with its cause. After Start the synthesizer
// supervises itself until Close. Deliberately parallel to host/device's Start
// and checkDescription: each wires supervise to its own plugin kind, whose
// description and checks differ; the lifecycle they share is supervise's.
func Start(ctx context.Context, opts Options) (*Synth, error) {
	if opts.Name == "" {
		opts.Name = "synth"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	opts.Launch.Kind = plugins.KindSynthesizer
	s := &Synth{opts: opts, log: opts.Logger}
	lc := opts.Launch
	if lc.Logger == nil {
		lc.Logger = s.log.Named("plugin")
	}
	sup, err := supervise.Start(ctx, supervise.Config[synthesizer]{
		Kind: plugins.KindSynthesizer, Name: opts.Name, Path: lc.Path,
		Start: supervise.LaunchThen(lc, s.ready), Policy: opts.Policy, Logger: opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("synthesizer %s: %w", opts.Name, err)
	}
	s.sup = sup
	s.slots = make(chan struct{}, max(1, sup.Status().Latest.desc.MaxInFlight))
	return s, nil
}

// ready describes a started synthesizer process, checks it and loads the
// circuit into it.
func (s *Synth) ready(ctx context.Context, proc *plugins.Process) (synthesizer, error) {
	path := s.opts.Launch.Path
	client := proc.Synthesizer()
	desc, err := client.Describe(ctx)
	if err != nil {
		if sdk.KindOf(err) == sdk.ErrUnimplemented {
			return synthesizer{}, fmt.Errorf("describe %s: %w (is it a synthesizer? it does not serve the synthesizer service; a backend binary serves another)", path, err)
		}
		return synthesizer{}, fmt.Errorf("describe %s: %w", path, err)
	}
	if err := checkDescription(desc, s.opts.Circuit.Curve); err != nil {
		return synthesizer{}, fmt.Errorf("synthesizer %s: %w", path, err)
	}
	if err := client.LoadCircuit(ctx, s.opts.Circuit); err != nil {
		return synthesizer{}, fmt.Errorf("synthesizer %s: loading circuit %s: %w", path, s.opts.Circuit.ID, err)
	}
	s.log.Info("synthesizer ready", "name", desc.Name, "version", desc.Version, "circuit", s.opts.Circuit.ID,
		"max_in_flight", desc.MaxInFlight, "pid", proc.Pid())
	return synthesizer{client: client, desc: desc}, nil
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

// current waits for a serving process and returns its client and the context
// that ends when it exits.
func (s *Synth) current(ctx context.Context) (sdk.Synthesizer, context.Context, error) {
	sess, err := s.sup.Current(ctx)
	switch {
	case err == nil:
		return sess.Client.client, sess.Alive, nil
	case err == ctx.Err():
		return nil, nil, err
	}
	return nil, nil, fmt.Errorf("synthesizer %s: %w", s.opts.Name, err)
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
		case <-time.After(40 * s.sup.PollInterval()):
		}
		return sdk.SynthesizeResult{}, fmt.Errorf("%s: synthesizer %w (%v)", s.opts.Name, ErrCrashed, err)
	}
	return sdk.SynthesizeResult{}, err
}

// Kill kills the process as a crash would (used by tests): the supervisor
// restarts it.
func (s *Synth) Kill() { s.sup.Kill("synthesizer killed by the host") }

// KillHung kills a synthesizer that did not answer within its deadline
// (stopped, hung or wedged). It is not ready from this moment, with reason as
// its last error, for as long as the kill takes (up to plugins.KillGrace and a
// SIGKILL for a process that does not let go); its calls in flight end with
// ErrCrashed and the supervisor restarts it once the process is gone.
func (s *Synth) KillHung(reason string) { s.sup.Kill(reason) }

// Info returns a snapshot for status and logs.
func (s *Synth) Info() Info {
	st := s.sup.Status()
	s.mu.Lock()
	inFlight := s.inFlight
	s.mu.Unlock()
	return Info{
		Name: s.opts.Name, Path: s.opts.Launch.Path, Description: st.Latest.desc,
		Ready: st.State == supervise.Ready, Unhealthy: st.State == supervise.Unhealthy,
		InFlight: inFlight, Restarts: st.Restarts, Crashes: st.Crashes, Pid: st.Pid, LastError: st.LastError,
	}
}

// Close stops supervision and the process.
func (s *Synth) Close() { s.sup.Close() }
