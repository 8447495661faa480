package device

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/plugins"
)

// ErrCrashed is returned by calls that were in flight when the backend process
// exited, and by calls made while it restarts. The work may be retried.
var ErrCrashed = errors.New("backend process exited")

// admissionWait bounds how long Prove keeps asking a backend that refuses a call
// for lack of room (a retryable resource_exhausted) before it returns the refusal.
// A backend refuses so while it winds down a call the host cancelled: the host's
// side of a cancelled call returns at once, the backend's only when its proof
// notices, so for a moment the backend counts one call more than the host.
const admissionWait = 10 * time.Second

// controlCallTimeout bounds a call the device makes on its own behalf (unloading
// an idle key): a backend that takes longer is not serving. A variable so tests
// can shorten it.
var controlCallTimeout = 30 * time.Second

// ErrStopped is returned by calls on a Device after Close.
var ErrStopped = errors.New("device stopped")

// ErrNotServing is returned by calls on a device whose backend exited and could
// not be started again (StateDown). The call never reached a backend, so the
// work it carried is not at fault.
var ErrNotServing = errors.New("device cannot start its backend")

// ErrCompactRefused says a compact partition (W alone, sdk.FormatCompactW) was
// sent for a key the backend loaded without taking its constraints
// (sdk.KeyInfo.CompactW false): the partition must be synthesized again in
// full (W, A and B). Nothing was sent to the backend.
var ErrCompactRefused = errors.New("the backend did not take the circuit's constraints for this key, so it proves only full partitions")

// State is where a device's backend process stands.
type State int

// Device states.
const (
	StateStarting   State = iota // launching the backend
	StateReady                   // serving
	StateRestarting              // the backend exited; waiting out the backoff
	StateUnhealthy               // crashed CrashLimit times within CrashWindow; not restarted until re-enabled or the window passes
	StateStopped                 // Close was called
	StateDown                    // the backend exited and a restart failed (binary gone or changed, cannot start); retried with backoff
)

func (s State) String() string {
	switch s {
	case StateStarting:
		return "starting"
	case StateReady:
		return "ready"
	case StateRestarting:
		return "restarting"
	case StateUnhealthy:
		return "unhealthy"
	case StateStopped:
		return "stopped"
	case StateDown:
		return "down"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// Options configures a Device.
type Options struct {
	// Name is the device's name in logs and status ("cpu0", "gpu1").
	Name string
	// Launch says which backend binary to start and how.
	Launch plugins.LaunchConfig
	// InFlight, when above zero, overrides the backend's declared MaxInFlight.
	InFlight int
	// BackoffBase and BackoffMax bound the delay before a restart; it doubles
	// after each consecutive crash. Defaults 200ms and 30s.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// CrashLimit crashes within CrashWindow make the device unhealthy; 0 never does.
	CrashLimit  int
	CrashWindow time.Duration
	// PollInterval is how often the process is checked for exit; default 50ms.
	PollInterval time.Duration
	// Logger is the device's logger; the backend's stderr is forwarded to it.
	Logger hclog.Logger
	// PidDir, when set, holds a pid file per running backend, so a host that
	// starts after a crash can reap backends left behind (ReapStale).
	PidDir string
}

// Info is a snapshot of a device for status pages.
type Info struct {
	Name        string
	State       State
	Description sdk.Description
	InFlight    int // partitions being proved now
	MaxInFlight int
	Restarts    int
	// StartFailures counts failed restarts since the backend last ran.
	StartFailures int
	Crashes       int // within the crash window
	Keys          []string
	Pid           int
	LastError     string
}

type residentKey struct {
	ref      sdk.KeyRef
	info     sdk.KeyInfo
	lastUsed time.Time
	users    int
	loading  chan struct{} // closed when the load finished (ok or not)
	err      error
}

// Device is one supervised backend process.
type Device struct {
	opts Options
	log  hclog.Logger

	mu        sync.Mutex
	state     State
	proc      *plugins.Process
	backend   sdk.Backend
	desc      sdk.Description
	gen       uint64             // incremented at every (re)start
	procCtx   context.Context    // cancelled when the current process exits
	procStop  context.CancelFunc //
	keys      map[string]*residentKey
	inFlight  int
	restarts  int
	startFail int // failed restarts since the backend last ran
	crashes   []time.Time
	lastErr   string
	readyCh   chan struct{} // closed when state becomes Ready; replaced on restart
	stopCh    chan struct{}
	stopped   bool
	superDone chan struct{}
}

// Start launches the backend and waits for its first Describe, so a missing
// binary, a bad checksum or a backend that cannot start is reported here with
// its cause. After Start the device supervises itself until Close.
func Start(ctx context.Context, opts Options) (*Device, error) {
	if opts.Name == "" {
		opts.Name = "device"
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
	d := &Device{
		opts:      opts,
		log:       opts.Logger,
		keys:      map[string]*residentKey{},
		readyCh:   make(chan struct{}),
		stopCh:    make(chan struct{}),
		superDone: make(chan struct{}),
	}
	if err := d.launch(ctx); err != nil {
		return nil, fmt.Errorf("device %s: %w", opts.Name, err)
	}
	go d.supervise()
	return d, nil
}

// launch starts one backend process and describes it.
func (d *Device) launch(ctx context.Context) error {
	lc := d.opts.Launch
	if lc.Logger == nil {
		lc.Logger = d.log.Named("backend")
	}
	proc, err := plugins.Launch(ctx, lc)
	if err != nil {
		return err
	}
	be := proc.Backend()
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	desc, err := be.Describe(dctx)
	cancel()
	if err != nil {
		proc.Kill()
		return fmt.Errorf("describe %s: %w", lc.Path, err)
	}
	if err := checkDescription(desc); err != nil {
		proc.Kill()
		return fmt.Errorf("backend %s: %w", lc.Path, err)
	}
	if err := writePidFile(d.opts.PidDir, d.opts.Name, proc.Pid(), lc.Path); err != nil {
		d.log.Warn("recording the backend's pid", "error", err)
	}
	pctx, pstop := context.WithCancel(context.Background())
	d.mu.Lock()
	d.proc, d.backend, d.desc = proc, be, desc
	d.procCtx, d.procStop = pctx, pstop
	d.gen++
	d.state = StateReady
	d.startFail = 0
	close(d.readyCh)
	d.mu.Unlock()
	d.log.Info("backend ready", "name", desc.Name, "version", desc.Version, "kind", desc.Device.Kind,
		"model", desc.Device.Model, "available", desc.Device.Available, "max_in_flight", desc.MaxInFlight, "pid", proc.Pid())
	return nil
}

// checkDescription rejects a backend this host cannot use.
func checkDescription(desc sdk.Description) error {
	okVersion := false
	for _, v := range desc.APIVersions {
		if v == sdk.APIVersion {
			okVersion = true
		}
	}
	if !okVersion {
		return fmt.Errorf("speaks backend API versions %v, this host speaks %d", desc.APIVersions, sdk.APIVersion)
	}
	if desc.MaxInFlight < 1 {
		return fmt.Errorf("declares max in flight %d, need at least 1", desc.MaxInFlight)
	}
	return nil
}

// supervise watches the process and restarts it after a crash.
func (d *Device) supervise() {
	defer close(d.superDone)
	SuperviseLoop(Supervision{
		Stop: d.stopCh, PollInterval: d.opts.PollInterval,
		BackoffBase: d.opts.BackoffBase, BackoffMax: d.opts.BackoffMax,
		Exited: func() bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.proc != nil && d.proc.Exited()
		},
		OnExit: func() bool {
			unhealthy := d.onCrash()
			if unhealthy {
				d.log.Error("backend crashed too often; device taken out of service", "crashes", d.opts.CrashLimit, "window", d.opts.CrashWindow)
			}
			return unhealthy
		},
		WaitHealthy: d.waitHealthy,
		Restart: func(ctx context.Context) error {
			if err := d.launch(ctx); err != nil {
				return err
			}
			d.mu.Lock()
			d.restarts++
			d.mu.Unlock()
			return nil
		},
		RestartFailed: func(err error, retryIn time.Duration) {
			d.log.Error("backend restart failed; the device takes no work until a restart succeeds", "error", err, "retry_in", retryIn)
			d.mu.Lock()
			// Down, not restarting: a backend that cannot start (its binary
			// replaced or removed, a library missing) stays so until someone
			// acts, and its device must neither look healthy nor take work.
			d.lastErr = err.Error()
			d.startFail++
			if d.state == StateRestarting {
				d.state = StateDown
			}
			d.mu.Unlock()
		},
	})
}

// onCrash records a crash, fails calls in flight, forgets resident keys, and
// reports whether the device is now unhealthy.
func (d *Device) onCrash() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	d.crashes = append(d.crashes, now)
	d.pruneCrashes(now)
	d.log.Warn("backend process exited", "pid", d.proc.Pid(), "crashes_in_window", len(d.crashes))
	if d.state == StateReady {
		// Exited on its own; a process the host killed keeps the reason kill gave.
		d.lastErr = "backend process exited"
	}
	if d.procStop != nil {
		d.procStop()
	}
	d.proc.Kill()
	removePidFile(d.opts.PidDir, d.opts.Name, d.proc.Pid())
	d.proc, d.backend = nil, nil
	d.keys = map[string]*residentKey{}
	d.readyCh = make(chan struct{})
	if d.opts.CrashLimit > 0 && len(d.crashes) >= d.opts.CrashLimit {
		d.state = StateUnhealthy
		return true
	}
	d.state = StateRestarting
	return false
}

func (d *Device) pruneCrashes(now time.Time) {
	if d.opts.CrashWindow <= 0 {
		return
	}
	i := 0
	for i < len(d.crashes) && now.Sub(d.crashes[i]) > d.opts.CrashWindow {
		i++
	}
	d.crashes = d.crashes[i:]
}

// waitHealthy blocks until the crash window has passed or Enable is called; it
// returns false when the device is stopped meanwhile.
func (d *Device) waitHealthy() bool {
	for {
		select {
		case <-d.stopCh:
			return false
		case <-time.After(d.opts.PollInterval * 4):
		}
		d.mu.Lock()
		d.pruneCrashes(time.Now())
		ok := d.state != StateUnhealthy || len(d.crashes) < d.opts.CrashLimit
		if ok {
			d.state = StateRestarting
		}
		d.mu.Unlock()
		if ok {
			return true
		}
	}
}

// Enable puts an unhealthy device back into service (an operator's decision).
func (d *Device) Enable() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state == StateUnhealthy {
		d.crashes = nil
		d.state = StateRestarting
	}
}

// Healthy reports whether the device is serving or about to serve again.
func (d *Device) Healthy() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state == StateReady || d.state == StateRestarting || d.state == StateStarting
}

// Name returns the device's name.
func (d *Device) Name() string { return d.opts.Name }

// Description returns the backend's latest Describe answer.
func (d *Device) Description() sdk.Description {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.desc
}

// MaxInFlight is how many partitions the host keeps outstanding on this device.
func (d *Device) MaxInFlight() int {
	if d.opts.InFlight > 0 {
		return d.opts.InFlight
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return max(1, d.desc.MaxInFlight)
}

// Info returns a snapshot for status.
func (d *Device) Info() Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pruneCrashes(time.Now())
	info := Info{
		Name: d.opts.Name, State: d.state, Description: d.desc, InFlight: d.inFlight,
		Restarts: d.restarts, StartFailures: d.startFail, Crashes: len(d.crashes), LastError: d.lastErr,
	}
	info.MaxInFlight = d.opts.InFlight
	if info.MaxInFlight <= 0 {
		info.MaxInFlight = max(1, d.desc.MaxInFlight)
	}
	if d.proc != nil {
		info.Pid = d.proc.Pid()
	}
	for id, k := range d.keys {
		if k.err == nil {
			info.Keys = append(info.Keys, id)
		}
	}
	return info
}

// HasKey reports whether key id is resident on the device now.
func (d *Device) HasKey(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	k, ok := d.keys[id]
	return ok && k.err == nil && isClosed(k.loading)
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// current waits for a ready backend and returns it with its generation and the
// context that ends when that process exits.
func (d *Device) current(ctx context.Context) (sdk.Backend, uint64, context.Context, error) {
	for {
		d.mu.Lock()
		if d.stopped {
			d.mu.Unlock()
			return nil, 0, nil, ErrStopped
		}
		if d.state == StateUnhealthy {
			d.mu.Unlock()
			return nil, 0, nil, fmt.Errorf("device %s is unhealthy (crashed %d times within %s): %w", d.opts.Name, d.opts.CrashLimit, d.opts.CrashWindow, ErrCrashed)
		}
		if d.state == StateDown {
			err := fmt.Errorf("device %s: %w: %s", d.opts.Name, ErrNotServing, d.lastErr)
			d.mu.Unlock()
			return nil, 0, nil, err
		}
		if d.state == StateReady && d.proc != nil && d.proc.Exited() {
			// The process died and the supervisor has not noticed yet: wait for
			// it rather than hand a call to a dead backend (which would cost the
			// caller's partition an attempt).
			d.mu.Unlock()
			select {
			case <-ctx.Done():
				return nil, 0, nil, ctx.Err()
			case <-d.stopCh:
				return nil, 0, nil, ErrStopped
			case <-time.After(d.opts.PollInterval):
			}
			continue
		}
		if d.state == StateReady {
			be, gen, pctx := d.backend, d.gen, d.procCtx
			d.mu.Unlock()
			return be, gen, pctx, nil
		}
		ready := d.readyCh
		d.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, 0, nil, ctx.Err()
		case <-d.stopCh:
			return nil, 0, nil, ErrStopped
		case <-ready:
		case <-time.After(d.opts.PollInterval):
			// Look again: a restart that fails makes the device down, and a
			// call waiting for it must hear so rather than wait on.
		}
	}
}

// LoadKey makes key resident on the device; concurrent loads of one key share a
// single backend call. It answers the key's resident bytes.
func (d *Device) LoadKey(ctx context.Context, key sdk.KeyRef) (sdk.KeyInfo, error) {
	be, gen, _, err := d.current(ctx)
	if err != nil {
		return sdk.KeyInfo{}, err
	}
	d.mu.Lock()
	k, ok := d.keys[key.ID]
	if ok && k.ref.Digest != key.Digest {
		d.mu.Unlock()
		return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "key %s is loaded with another digest", key.ID)
	}
	if !ok {
		k = &residentKey{ref: key, loading: make(chan struct{})}
		d.keys[key.ID] = k
		d.mu.Unlock()
		info, err := be.LoadKey(ctx, key)
		d.mu.Lock()
		k.info, k.err = info, err
		k.lastUsed = time.Now()
		close(k.loading)
		if err != nil && d.keys[key.ID] == k {
			delete(d.keys, key.ID)
		}
		d.mu.Unlock()
		if err != nil {
			return sdk.KeyInfo{}, d.classify(gen, err)
		}
		d.log.Info("key loaded", "key", key.ID, "host_bytes", info.HostBytes, "device_bytes", info.DeviceBytes)
		return info, nil
	}
	d.mu.Unlock()
	select {
	case <-k.loading:
	case <-ctx.Done():
		return sdk.KeyInfo{}, ctx.Err()
	}
	if k.err != nil {
		return sdk.KeyInfo{}, d.classify(gen, k.err)
	}
	return k.info, nil
}

// UnloadKey releases key id on the device.
func (d *Device) UnloadKey(ctx context.Context, id string) error {
	be, gen, _, err := d.current(ctx)
	if err != nil {
		return err
	}
	d.mu.Lock()
	k, ok := d.keys[id]
	if ok && k.users > 0 {
		d.mu.Unlock()
		return sdk.Errorf(sdk.ErrInvalidArgument, "key %s is in use by %d proofs", id, k.users)
	}
	delete(d.keys, id)
	d.mu.Unlock()
	if err := be.UnloadKey(ctx, id); err != nil {
		return d.classify(gen, err)
	}
	return nil
}

// EvictIdle unloads keys unused for longer than idle and returns their ids.
func (d *Device) EvictIdle(ctx context.Context, idle time.Duration) []string {
	if idle <= 0 {
		return nil
	}
	var ids []string
	d.mu.Lock()
	now := time.Now()
	for id, k := range d.keys {
		if k.users == 0 && isClosed(k.loading) && k.err == nil && now.Sub(k.lastUsed) > idle {
			ids = append(ids, id)
		}
	}
	d.mu.Unlock()
	var evicted []string
	for _, id := range ids {
		// Bounded: the caller (the daemon's housekeeping) must not wait on a
		// stopped backend, and one that does not answer is killed as hung.
		cctx, cancel := context.WithTimeout(ctx, controlCallTimeout)
		err := d.UnloadKey(cctx, id)
		timedOut := errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			evicted = append(evicted, id)
			d.log.Info("key evicted after idling", "key", id, "idle", idle)
			continue
		}
		if timedOut {
			d.log.Error("backend did not answer an unload within its deadline; killing it", "key", id, "deadline", controlCallTimeout)
			d.KillHung(fmt.Sprintf("backend did not answer an unload within %s; killed", controlCallTimeout))
			break
		}
	}
	return evicted
}

// Prove loads key if needed and proves one partition. If the backend process
// exits during the call, the error wraps ErrCrashed.
func (d *Device) Prove(ctx context.Context, key sdk.KeyRef, part sdk.PartitionHandle) (sdk.ProveResult, error) {
	info, err := d.LoadKey(ctx, key)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	if part.Format == sdk.FormatCompactW && !info.CompactW {
		return sdk.ProveResult{}, fmt.Errorf("device %s, key %s: %w", d.opts.Name, key.ID, ErrCompactRefused)
	}
	be, gen, pctx, err := d.current(ctx)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	d.mu.Lock()
	k := d.keys[key.ID]
	if k != nil {
		k.users++
	}
	d.inFlight++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if k != nil {
			k.users--
			k.lastUsed = time.Now()
		}
		d.inFlight--
		d.mu.Unlock()
	}()
	// The call ends when the caller cancels or when the process dies.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(pctx, cancel)
	defer stop()
	req := sdk.ProveRequest{KeyID: key.ID, Partition: part}
	res, err := be.Prove(cctx, req)
	// Wait for room rather than fail the attempt (see admissionWait).
	giveUp := time.Now().Add(admissionWait)
	for wait := 5 * time.Millisecond; err != nil && sdk.KindOf(err) == sdk.ErrResourceExhausted && sdk.IsRetryable(err) && time.Now().Before(giveUp); wait = min(2*wait, 500*time.Millisecond) {
		select {
		case <-cctx.Done():
		case <-time.After(wait):
			res, err = be.Prove(cctx, req)
		}
		if cctx.Err() != nil {
			break
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return sdk.ProveResult{}, ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// The sdk client reads a cancel from the backend's side at our
			// deadline as that deadline; a missed deadline is not a plain cancel.
			return sdk.ProveResult{}, context.DeadlineExceeded
		}
		return sdk.ProveResult{}, d.classify(gen, err)
	}
	return res, nil
}

// Utilization asks the backend for its device's utilization samples after
// since (sdk.UtilizationReporter). A backend that does not report it answers
// an error of kind sdk.ErrUnimplemented. It waits for a backend that is
// restarting as long as ctx allows.
func (d *Device) Utilization(ctx context.Context, since time.Time) (sdk.Utilization, error) {
	be, _, _, err := d.current(ctx)
	if err != nil {
		return sdk.Utilization{}, err
	}
	r, ok := be.(sdk.UtilizationReporter)
	if !ok {
		return sdk.Utilization{}, sdk.Errorf(sdk.ErrUnimplemented, "device %s: the backend client reports no utilization", d.opts.Name)
	}
	return r.Utilization(ctx, since)
}

// classify turns an error from backend generation gen into ErrCrashed when that
// process has exited (its gRPC errors say only "unavailable").
func (d *Device) classify(gen uint64, err error) error {
	// Give the supervisor a moment to notice an exit that caused this error,
	// and to record it: a caller that retries at once must find the device
	// restarting (or unhealthy), not ready with a dead process.
	exited := false
	for i := 0; i < 8; i++ {
		d.mu.Lock()
		noticed := d.gen != gen || d.state != StateReady
		exited = exited || (d.proc != nil && d.proc.Exited())
		d.mu.Unlock()
		if noticed {
			return fmt.Errorf("device %s: %w (%v)", d.opts.Name, ErrCrashed, err)
		}
		// A lost connection (sdk.ErrPluginShutdown, also a typed
		// unavailable error) usually means the process is dying: wait for the
		// exit to show.
		var se *sdk.Error
		if !exited && errors.As(err, &se) && !errors.Is(err, sdk.ErrPluginShutdown) {
			return err
		}
		time.Sleep(d.opts.PollInterval)
	}
	if exited || errors.Is(err, sdk.ErrPluginShutdown) {
		return fmt.Errorf("device %s: %w (connection lost: %v)", d.opts.Name, ErrCrashed, err)
	}
	return err
}

// Kill kills the backend process as a crash would (used by tests): the
// supervisor restarts it.
func (d *Device) Kill() { d.kill("backend killed by the host") }

// KillHung kills a backend that did not answer a call within its deadline
// (stopped, hung or wedged). The device shows restarting with reason at once,
// for as long as the kill takes (up to plugins.KillGrace and a SIGKILL for a
// process that does not let go), its calls in flight end with ErrCrashed, and
// the supervisor restarts it once the process is gone.
func (d *Device) KillHung(reason string) { d.kill(reason) }

// kill marks the device restarting for reason, ends the calls in flight on the
// current process and kills it.
func (d *Device) kill(reason string) {
	d.mu.Lock()
	proc := d.proc
	if proc == nil || d.stopped {
		d.mu.Unlock()
		return
	}
	if d.state == StateReady {
		// New calls wait for the restart instead of going to the process
		// being killed; status says why meanwhile.
		d.state = StateRestarting
		d.readyCh = make(chan struct{})
	}
	d.lastErr = reason
	if d.procStop != nil {
		d.procStop()
	}
	d.mu.Unlock()
	proc.Kill()
}

// Close stops supervision and the backend process.
func (d *Device) Close() {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	d.stopped = true
	d.state = StateStopped
	close(d.stopCh)
	proc := d.proc
	if d.procStop != nil {
		d.procStop()
	}
	d.mu.Unlock()
	<-d.superDone
	if proc != nil {
		proc.Kill()
		removePidFile(d.opts.PidDir, d.opts.Name, proc.Pid())
	}
}
