package supervise

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk/plugins"
)

// ErrCrashed is returned (wrapped) by calls that were in flight when the plugin
// process exited or was killed, and by calls made while it restarts. The work
// may be retried.
var ErrCrashed = errors.New("process exited")

// ErrUnhealthy is returned (wrapped) by Current while the plugin is out of
// service after crashing Config.CrashLimit times within Config.CrashWindow.
var ErrUnhealthy = errors.New("out of service")

// ErrNotServing is returned (wrapped) by Current while restarts of an exited
// plugin fail, when Config.FailWhileDown says so. The call never reached a
// process, so the work it carried is not at fault.
var ErrNotServing = errors.New("its plugin process cannot be started")

// ErrStopped is returned by Current after Close.
var ErrStopped = errors.New("stopped")

// State is where a supervised plugin process stands.
type State int

// Supervisor states.
const (
	Starting   State = iota // launching the first process
	Ready                   // serving
	Restarting              // the process exited or is being killed; a new one starts after the backoff
	Unhealthy               // crashed CrashLimit times within CrashWindow; not restarted until Enable or the window passes
	Stopped                 // Close was called
	Down                    // the process exited and a restart failed (binary gone or changed, cannot start); retried with backoff
)

// String names the state. Deliberately parallel to sdk.Section's String:
// each enum names its own values in a switch, the plain Go for it (and the
// SDK is a module of its own).
func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Ready:
		return "ready"
	case Restarting:
		return "restarting"
	case Unhealthy:
		return "unhealthy"
	case Stopped:
		return "stopped"
	case Down:
		return "down"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// Process is a running plugin process as the supervisor watches it
// (*plugins.Process is one).
type Process interface {
	Pid() int
	Exited() bool
	Kill()
}

// Config says which plugin a Supervisor runs and how it keeps it running. C is
// what a start makes ready to serve: a client and what the plugin described.
type Config[C any] struct {
	// Kind and Name name the plugin in logs and its pid file ("backend", "dev0").
	Kind plugins.Kind
	Name string
	// Path is the plugin's executable, recorded in its pid file so that
	// ReapStale kills only a process that still runs it.
	Path string
	// Start starts one process and makes it ready to serve (describes it, loads
	// what it needs); when that fails after the process started, Start kills it.
	// It runs once in the package's Start and again after every exit.
	Start func(ctx context.Context) (Process, C, error)
	// Forget, when set, is called after an exit was recorded and before the
	// next start, to drop what the caller kept for the process that is gone (a
	// backend's resident keys).
	Forget func()
	// FailWhileDown makes Current fail with ErrNotServing while restarts fail,
	// rather than wait for one that succeeds: a device's work can go to another
	// device, where a circuit has only its one synthesizer to wait for.
	FailWhileDown bool
	Policy
	// Logger receives the supervisor's messages; nil discards them.
	Logger hclog.Logger
}

// Policy says how a plugin process is kept running; a device's backend and a
// synthesizer are kept running alike (the daemon's [retry] and [health]).
type Policy struct {
	// BackoffBase and BackoffMax bound the delay before a restart; it doubles
	// after each consecutive crash. Defaults 200ms and 30s.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// CrashLimit crashes within CrashWindow take the plugin out of service until
	// the window has passed or Enable is called; 0 never does.
	CrashLimit  int
	CrashWindow time.Duration
	// PollInterval is how often the process is checked for exit; default 50ms.
	PollInterval time.Duration
	// PidDir, when set, holds a pid file per running process, so a host that
	// starts after a crash reaps what this one left behind (ReapStale).
	PidDir string
}

// readyTimeout bounds the calls that ready a started plugin (Describe, loading
// a circuit): a plugin that takes longer is not serving.
const readyTimeout = 30 * time.Second

// LaunchThen returns a Config.Start that launches the plugin lc names
// (plugins.Launch) and readies it with ready, within readyTimeout; when ready
// fails, the process is killed and the error returned.
func LaunchThen[C any](lc plugins.LaunchConfig, ready func(context.Context, *plugins.Process) (C, error)) func(context.Context) (Process, C, error) {
	return func(ctx context.Context) (Process, C, error) {
		var none C
		proc, err := plugins.Launch(ctx, lc)
		if err != nil {
			return nil, none, err
		}
		rctx, cancel := context.WithTimeout(ctx, readyTimeout)
		defer cancel()
		c, err := ready(rctx, proc)
		if err != nil {
			proc.Kill()
			return nil, none, err
		}
		return proc, c, nil
	}
}

// Lease is a call's hold on the process that serves it.
type Lease[C any] struct {
	Client C
	// Gen is the process's generation: it grows with every start (ExitNoticed).
	Gen uint64
	// Alive ends when the process exits or is killed: a call made on it ends
	// with it rather than wait on a dead connection.
	Alive context.Context
}

// Status is a snapshot of a supervisor.
type Status[C any] struct {
	State State
	// Latest is what the latest start made ready; it is kept after its process
	// exits, so status can still show what the plugin described.
	Latest        C
	Pid           int // 0 while no process runs
	Restarts      int // processes started after the first
	StartFailures int // failed restarts since a process last served
	Crashes       int // exits within the crash window
	LastError     string
}

// Supervisor runs one plugin process and starts it again when it exits.
type Supervisor[C any] struct {
	cfg  Config[C]
	what string // the kind, as log lines and status name it
	log  hclog.Logger

	mu        sync.Mutex
	state     State
	proc      Process
	latest    C
	gen       uint64             // incremented at every start
	alive     context.Context    // ends when the current process exits or is killed
	endAlive  context.CancelFunc //
	readyCh   chan struct{}      // closed when the state becomes Ready; replaced when it stops being so
	restarts  int
	startFail int
	crashes   []time.Time // exits within the crash window, oldest first
	lastErr   string
	stopped   bool
	stopCh    chan struct{}
	loopDone  chan struct{}
}

// Start starts the plugin through cfg.Start and returns once it serves, or
// with the error cfg.Start gave. After Start the plugin is supervised until
// Close.
func Start[C any](ctx context.Context, cfg Config[C]) (*Supervisor[C], error) {
	if cfg.Start == nil {
		return nil, fmt.Errorf("supervising %s %s: no Start function", cfg.Kind, cfg.Name)
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = 200 * time.Millisecond
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 30 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 50 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	s := &Supervisor[C]{
		cfg:      cfg,
		what:     cfg.Kind.String(),
		log:      cfg.Logger,
		state:    Starting,
		readyCh:  make(chan struct{}),
		stopCh:   make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if err := s.start(ctx, false); err != nil {
		return nil, err
	}
	go s.supervise()
	return s, nil
}

// PollInterval is how often the supervisor looks at its process (the
// configured value or its default).
func (s *Supervisor[C]) PollInterval() time.Duration { return s.cfg.PollInterval }

// start starts one process and makes it current; restart says it replaces one
// that exited, and is counted before a call can see the new process.
func (s *Supervisor[C]) start(ctx context.Context, restart bool) error {
	proc, c, err := s.cfg.Start(ctx)
	if err != nil {
		return err
	}
	if err := writePidFile(s.cfg.PidDir, s.cfg.Name, proc.Pid(), s.cfg.Path); err != nil {
		s.log.Warn("recording the "+s.what+"'s pid", "error", err)
	}
	alive, endAlive := context.WithCancel(context.Background())
	s.mu.Lock()
	if s.stopped {
		// Closed while this process started: Close found none to kill.
		s.mu.Unlock()
		endAlive()
		proc.Kill()
		removePidFile(s.cfg.PidDir, s.cfg.Name, proc.Pid())
		return ErrStopped
	}
	s.proc, s.latest = proc, c
	s.alive, s.endAlive = alive, endAlive
	s.gen++
	if restart {
		s.restarts++
	}
	s.startFail = 0
	s.state = Ready
	close(s.readyCh)
	s.mu.Unlock()
	return nil
}

// supervise watches the process and restarts it after it exits.
func (s *Supervisor[C]) supervise() {
	defer close(s.loopDone)
	runLoop(loopHooks{
		Stop: s.stopCh, PollInterval: s.cfg.PollInterval,
		BackoffBase: s.cfg.BackoffBase, BackoffMax: s.cfg.BackoffMax,
		Exited: func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.proc != nil && s.proc.Exited()
		},
		OnExit:        s.onExit,
		WaitHealthy:   s.waitHealthy,
		Restart:       func(ctx context.Context) error { return s.start(ctx, true) },
		RestartFailed: s.restartFailed,
	})
}

// onExit records an exit, ends the calls in flight on the process and reports
// whether the plugin is now out of service.
func (s *Supervisor[C]) onExit() (unhealthy bool) {
	s.mu.Lock()
	if s.stopped {
		// Close kills the process and removes its pid file.
		s.mu.Unlock()
		return false
	}
	now := time.Now()
	s.crashes = append(s.crashes, now)
	s.pruneCrashes(now)
	proc := s.proc
	s.log.Warn(s.what+" process exited", "pid", proc.Pid(), "crashes_in_window", len(s.crashes))
	if s.state == Ready {
		// Exited on its own; a process the host killed keeps the reason Kill gave.
		s.lastErr = s.what + " process exited"
	}
	s.endAlive()
	s.proc = nil
	s.readyCh = make(chan struct{})
	unhealthy = s.cfg.CrashLimit > 0 && len(s.crashes) >= s.cfg.CrashLimit
	s.state = Restarting
	if unhealthy {
		s.state = Unhealthy
	}
	s.mu.Unlock()
	proc.Kill() // releases what the host holds for the dead process
	removePidFile(s.cfg.PidDir, s.cfg.Name, proc.Pid())
	if s.cfg.Forget != nil {
		s.cfg.Forget()
	}
	if unhealthy {
		s.log.Error(s.what+" crashed too often; taken out of service until the crash window passes", "crashes", s.cfg.CrashLimit, "window", s.cfg.CrashWindow)
	}
	return unhealthy
}

// pruneCrashes forgets the exits older than the crash window; s.mu is held.
func (s *Supervisor[C]) pruneCrashes(now time.Time) {
	if s.cfg.CrashWindow <= 0 {
		return
	}
	i := 0
	for i < len(s.crashes) && now.Sub(s.crashes[i]) > s.cfg.CrashWindow {
		i++
	}
	s.crashes = s.crashes[i:]
}

// waitHealthy blocks until the crash window has passed or Enable is called; it
// returns false when the supervisor is closed meanwhile.
func (s *Supervisor[C]) waitHealthy() bool {
	for {
		select {
		case <-s.stopCh:
			return false
		case <-time.After(s.cfg.PollInterval * 4):
		}
		s.mu.Lock()
		s.pruneCrashes(time.Now())
		ok := !s.stopped && (s.state != Unhealthy || len(s.crashes) < s.cfg.CrashLimit)
		if ok {
			s.state = Restarting
		}
		s.mu.Unlock()
		if ok {
			return true
		}
	}
}

// restartFailed records a start that failed after an exit.
func (s *Supervisor[C]) restartFailed(err error, retryIn time.Duration) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	// Down, not restarting: a plugin that cannot start (its binary replaced or
	// removed, a library missing) stays so until someone acts, and must neither
	// look healthy nor take work.
	s.lastErr = err.Error()
	s.startFail++
	if s.state == Restarting {
		s.state = Down
	}
	s.mu.Unlock()
	s.log.Error(s.what+" restart failed; it serves no calls until a restart succeeds", "error", err, "retry_in", retryIn)
}

// Enable puts a plugin out of service back into service (an operator's
// decision): it is restarted at once.
func (s *Supervisor[C]) Enable() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == Unhealthy {
		s.crashes = nil
		s.state = Restarting
	}
}

// Current waits for a serving process and returns a lease on it. It fails
// at once, without waiting, when the plugin is out of service (ErrUnhealthy),
// closed (ErrStopped), or down while Config.FailWhileDown (ErrNotServing).
func (s *Supervisor[C]) Current(ctx context.Context) (Lease[C], error) {
	for {
		s.mu.Lock()
		switch {
		case s.stopped:
			s.mu.Unlock()
			return Lease[C]{}, ErrStopped
		case s.state == Unhealthy:
			err := fmt.Errorf("crashed %d times within %s: %w", s.cfg.CrashLimit, s.cfg.CrashWindow, ErrUnhealthy)
			s.mu.Unlock()
			return Lease[C]{}, err
		case s.state == Down && s.cfg.FailWhileDown:
			err := fmt.Errorf("%w: %s", ErrNotServing, s.lastErr)
			s.mu.Unlock()
			return Lease[C]{}, err
		}
		ready := s.readyCh
		if s.state == Ready {
			if !s.proc.Exited() {
				lease := Lease[C]{Client: s.latest, Gen: s.gen, Alive: s.alive}
				s.mu.Unlock()
				return lease, nil
			}
			// Exited, and not yet noticed: poll rather than hand the call to
			// a dead process (which would cost the caller's work an attempt).
			ready = nil
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return Lease[C]{}, ctx.Err()
		case <-s.stopCh:
			return Lease[C]{}, ErrStopped
		case <-ready:
		case <-time.After(s.cfg.PollInterval):
			// Look again: a restart that fails makes the plugin down, and a
			// call waiting for it must hear so rather than wait on.
		}
	}
}

// ExitNoticed reports, for a call on the process of generation gen, whether
// the supervisor has noticed that process's end (another one was started, or
// none serves now), and whether the current process has exited (an exit not
// yet noticed).
func (s *Supervisor[C]) ExitNoticed(gen uint64) (noticed, exited bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen != gen || s.state != Ready, s.proc != nil && s.proc.Exited()
}

// State returns where the plugin stands now.
func (s *Supervisor[C]) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Status returns a snapshot for status pages and logs.
func (s *Supervisor[C]) Status() Status[C] {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneCrashes(time.Now())
	st := Status[C]{
		State: s.state, Latest: s.latest, Restarts: s.restarts, StartFailures: s.startFail,
		Crashes: len(s.crashes), LastError: s.lastErr,
	}
	if s.proc != nil {
		st.Pid = s.proc.Pid()
	}
	return st
}

// Kill kills the current process for reason, as a crash would: it is not
// ready from this moment, with reason as its last error, for as long as the
// kill takes (up to plugins.KillGrace and a SIGKILL for a process that does
// not let go of its connection); its leases end at once, and the supervisor
// restarts it once the process is gone.
func (s *Supervisor[C]) Kill(reason string) {
	s.mu.Lock()
	proc := s.proc
	if proc == nil || s.stopped {
		s.mu.Unlock()
		return
	}
	if s.state == Ready {
		// New calls wait for the restart instead of going to the process
		// being killed; status says why meanwhile.
		s.state = Restarting
		s.readyCh = make(chan struct{})
	}
	s.lastErr = reason
	s.endAlive()
	s.mu.Unlock()
	proc.Kill()
}

// Close stops supervision and the process.
func (s *Supervisor[C]) Close() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	s.state = Stopped
	close(s.stopCh)
	proc := s.proc
	if s.endAlive != nil {
		s.endAlive()
	}
	s.mu.Unlock()
	<-s.loopDone
	if proc != nil {
		proc.Kill()
		removePidFile(s.cfg.PidDir, s.cfg.Name, proc.Pid())
	}
}
