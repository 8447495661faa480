package device

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

// ErrCrashed is returned (wrapped) by calls that were in flight when the
// backend process exited, by calls made while it restarts, and by calls on a
// device out of service. The work may be retried. It is the supervisor's, the
// same for both plugin kinds.
var ErrCrashed = supervise.ErrCrashed

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

// ErrStopped is returned (wrapped) by calls on a Device after Close.
var ErrStopped = supervise.ErrStopped

// ErrNotServing is returned (wrapped) by calls on a device whose backend
// exited and could not be started again (StateDown). The call never reached a
// backend, so the work it carried is not at fault.
var ErrNotServing = supervise.ErrNotServing

// ErrCompactRefused says a compact partition (W alone, sdk.FormatCompactW) was
// sent for a key the backend loaded without taking its constraints
// (sdk.KeyInfo.CompactW false): the partition must be synthesized again in
// full (W, A and B). Nothing was sent to the backend.
var ErrCompactRefused = errors.New("the backend did not take the circuit's constraints for this key, so it proves only full partitions")

// State is where a device's backend process stands (the supervisor's state).
type State = supervise.State

// Device states.
const (
	StateStarting   = supervise.Starting   // launching the backend
	StateReady      = supervise.Ready      // serving
	StateRestarting = supervise.Restarting // the backend exited; waiting out the backoff
	StateUnhealthy  = supervise.Unhealthy  // crashed CrashLimit times within CrashWindow; not restarted until re-enabled or the window passes
	StateStopped    = supervise.Stopped    // Close was called
	StateDown       = supervise.Down       // the backend exited and a restart failed (binary gone or changed, cannot start); retried with backoff
)

// Options configures a Device.
type Options struct {
	// Name is the device's name in logs and status ("cpu0", "gpu1").
	Name string
	// Launch says which backend binary to start and how.
	Launch plugins.LaunchConfig
	// InFlight, when above zero, overrides the backend's declared MaxInFlight.
	InFlight int
	// Policy says how the backend is kept running.
	supervise.Policy
	// Accept, when set, is the caller's own check of the backend's Describe,
	// made after the device's (API version, max in flight) at the first start
	// and at every restart: a backend replaced on disk between two starts is
	// checked again, not trusted because its first start passed. The daemon's
	// refuses a backend that does not prove on the curve of a circuit it serves.
	Accept func(sdk.Description) error
	// Logger is the device's logger; the backend's stderr is forwarded to it.
	Logger hclog.Logger
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
	sup  *supervise.Supervisor[backend]

	mu       sync.Mutex
	keys     map[string]*residentKey
	inFlight int
}

// backend is what a start of the backend process makes ready.
type backend struct {
	client sdk.Backend
	desc   sdk.Description
}

// Start launches the backend and waits for its first Describe, so a missing
// binary, a bad checksum or a backend that cannot start is reported here with
// its cause. After Start the device supervises itself until Close.
// Deliberately parallel to host/synth's Start and checkDescription: see why
// there.
func Start(ctx context.Context, opts Options) (*Device, error) {
	if opts.Name == "" {
		opts.Name = "device"
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	d := &Device{opts: opts, log: opts.Logger, keys: map[string]*residentKey{}}
	lc := opts.Launch
	lc.Kind = plugins.KindBackend
	if lc.Logger == nil {
		lc.Logger = d.log.Named("backend")
	}
	sup, err := supervise.Start(ctx, supervise.Config[backend]{
		Kind: plugins.KindBackend, Name: opts.Name, Path: lc.Path,
		Start: supervise.LaunchThen(lc, d.describe), Forget: d.forgetKeys,
		Policy: opts.Policy, Logger: opts.Logger,
		// A device that cannot start its backend takes no work; the
		// scheduler sends it to the others.
		FailWhileDown: true,
	})
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", opts.Name, err)
	}
	d.sup = sup
	return d, nil
}

// describe asks a started backend process to describe itself and checks it.
func (d *Device) describe(ctx context.Context, proc *plugins.Process) (backend, error) {
	path := d.opts.Launch.Path
	be := proc.Backend()
	desc, err := be.Describe(ctx)
	if err != nil {
		return backend{}, fmt.Errorf("describe %s: %w", path, err)
	}
	if err := checkDescription(desc, d.opts.Accept); err != nil {
		return backend{}, fmt.Errorf("backend %s: %w", path, err)
	}
	d.log.Info("backend ready", "name", desc.Name, "version", desc.Version, "kind", desc.Device.Kind,
		"model", desc.Device.Model, "available", desc.Device.Available, "max_in_flight", desc.MaxInFlight, "pid", proc.Pid())
	return backend{client: be, desc: desc}, nil
}

// forgetKeys forgets the keys resident in a backend process that is gone.
func (d *Device) forgetKeys() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys = map[string]*residentKey{}
}

// checkDescription rejects a backend this host cannot use, or that accept
// (Options.Accept; nil accepts all) refuses.
func checkDescription(desc sdk.Description, accept func(sdk.Description) error) error {
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
	if accept != nil {
		return accept(desc)
	}
	return nil
}

// Enable puts an unhealthy device back into service (an operator's decision).
func (d *Device) Enable() { d.sup.Enable() }

// Healthy reports whether the device is serving or about to serve again.
func (d *Device) Healthy() bool {
	st := d.sup.State()
	return st == StateReady || st == StateRestarting || st == StateStarting
}

// Name returns the device's name.
func (d *Device) Name() string { return d.opts.Name }

// Description returns the backend's latest Describe answer.
func (d *Device) Description() sdk.Description { return d.sup.Status().Latest.desc }

// MaxInFlight is how many partitions the host keeps outstanding on this device.
func (d *Device) MaxInFlight() int {
	if d.opts.InFlight > 0 {
		return d.opts.InFlight
	}
	return max(1, d.Description().MaxInFlight)
}

// Info returns a snapshot for status.
func (d *Device) Info() Info {
	st := d.sup.Status()
	info := Info{
		Name: d.opts.Name, State: st.State, Description: st.Latest.desc, Pid: st.Pid,
		Restarts: st.Restarts, StartFailures: st.StartFailures, Crashes: st.Crashes, LastError: st.LastError,
	}
	info.MaxInFlight = d.opts.InFlight
	if info.MaxInFlight <= 0 {
		info.MaxInFlight = max(1, st.Latest.desc.MaxInFlight)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	info.InFlight = d.inFlight
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

// isClosed reports whether ch is closed, without waiting.
// Deliberately parallel to sdk/keyreg's isClosed: a non-blocking receive is
// not worth an exported function of the SDK, which is a module of its own with
// an API third parties build on.
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
	sess, err := d.sup.Current(ctx)
	switch {
	case err == nil:
		return sess.Client.client, sess.Gen, sess.Alive, nil
	case errors.Is(err, supervise.ErrUnhealthy):
		// Crashed, as far as the caller is concerned: its work may go to
		// another device.
		return nil, 0, nil, fmt.Errorf("device %s: %w: %w", d.opts.Name, ErrCrashed, err)
	case err == ctx.Err():
		return nil, 0, nil, err
	}
	return nil, 0, nil, fmt.Errorf("device %s: %w", d.opts.Name, err)
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
		noticed, exitedNow := d.sup.ExitNoticed(gen)
		exited = exited || exitedNow
		if noticed {
			return fmt.Errorf("device %s: backend %w (%v)", d.opts.Name, ErrCrashed, err)
		}
		// A lost connection (sdk.ErrPluginShutdown, also a typed
		// unavailable error) usually means the process is dying: wait for the
		// exit to show.
		var se *sdk.Error
		if !exited && errors.As(err, &se) && !errors.Is(err, sdk.ErrPluginShutdown) {
			return err
		}
		time.Sleep(d.sup.PollInterval())
	}
	if exited || errors.Is(err, sdk.ErrPluginShutdown) {
		return fmt.Errorf("device %s: backend %w (connection lost: %v)", d.opts.Name, ErrCrashed, err)
	}
	return err
}

// Kill kills the backend process as a crash would (used by tests): the
// supervisor restarts it.
func (d *Device) Kill() { d.sup.Kill("backend killed by the host") }

// KillHung kills a backend that did not answer a call within its deadline
// (stopped, hung or wedged). The device shows restarting with reason at once,
// for as long as the kill takes (up to plugins.KillGrace and a SIGKILL for a
// process that does not let go), its calls in flight end with ErrCrashed, and
// the supervisor restarts it once the process is gone.
func (d *Device) KillHung(reason string) { d.sup.Kill(reason) }

// Close stops supervision and the backend process.
func (d *Device) Close() { d.sup.Close() }
