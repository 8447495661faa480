package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"golang.org/x/sync/semaphore"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/budget"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/device"
	"github.com/zkhost/zkhost/host/journal"
	"github.com/zkhost/zkhost/host/metrics"
	"github.com/zkhost/zkhost/host/queue"
	"github.com/zkhost/zkhost/host/supervise"
	"github.com/zkhost/zkhost/host/synth"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/internal/version"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/shm"
)

// Version is the daemon's version string, reported by Status: the build's, as every
// zkhost binary reports it (internal/version).
var Version = version.String()

// finalizeBytes is what a partition keeps reserved after its device returns: the
// proof, the public witness and the verifier's working memory.
const finalizeBytes = 1 << 20

// circuitEntry is a circuit the daemon serves, with its memory arithmetic.
type circuitEntry struct {
	name  string // the name clients use
	c     *circuit.Circuit
	class api.Class // default class of its jobs
	key   sdk.KeyRef
	// Bytes one partition reserves: the shared-memory file, the solver's working
	// vectors (released once the file is written), and the backend's host memory
	// (released when the device returns).
	shmBytes     uint64
	solverBytes  uint64
	backendBytes uint64
	// synth, when set, is the circuit's synthesizer plugin ([[circuit]]
	// synthesizer); nil means the built-in gnark solver. synthTimeout bounds one
	// call to it.
	synth        *synth.Synth
	synthPath    string
	synthTimeout time.Duration
	// cw, when set, makes the circuit's partitions compact (compact.go).
	cw *compactW
}

func (ce *circuitEntry) partitionBytes() uint64 {
	return ce.shmBytes + ce.solverBytes + ce.backendBytes + finalizeBytes
}

// Daemon is the proving host. Create it with New, then Run it.
type Daemon struct {
	cfg     *config.Config
	log     hclog.Logger
	journal *journal.Journal
	budget  *budget.Ledger
	shm     *shm.Store
	// socketDir holds the backends' unix sockets ("" for the temporary directory).
	socketDir string
	tl        *timeline.Writer
	metrics   *metrics.Metrics

	synthQ *queue.Queue[*task]
	readyQ *queue.Queue[*task]
	finalQ chan *task

	circuits map[string]*circuitEntry
	devices  []*deviceEntry
	keyResv  []*budget.Reservation
	// compact holds each circuit's constraints for compact partitions (nil
	// for a circuit that cannot have them), made at start (compact.go).
	compact map[*circuit.Circuit]*compactW

	started time.Time

	mu        sync.Mutex
	jobs      map[string]*liveJob
	synthBusy int
	// parked holds, by job ID, why an unfinished job of the journal waits:
	// its circuit is not served by this daemon (a config changed across a
	// restart). It stays in the journal as it was and resumes when a restart
	// serves the circuit again, unless a client cancels it.
	parked map[string]string
	// synthCores and synthWorkers are [synthesis] cores and workers, or,
	// where the config leaves them, what sizeSynthesis chose.
	synthCores, synthWorkers int
	// admitMu makes a limit check and the acceptance it allows one step (tenants.go).
	admitMu sync.Mutex

	// cores caps the solver threads running at once at [synthesis] cores:
	// each synthesis holds its threads' worth while it solves (pipeline.go).
	cores *semaphore.Weighted

	// stageTokens bounds the partitions synthesized (or being synthesized) and
	// not yet dispatched to a device: enough to keep every device slot fed, so
	// synthesis does not run arbitrarily far ahead of the devices and fill the
	// budget and shared memory with partitions that wait. The critical lane
	// takes no token.
	stageTokens chan struct{}

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New loads the circuits, opens the journal, prepares shared memory and starts one
// backend process per configured device. Every problem is an error naming the part
// of the config it comes from; nothing is left running on error.
func New(ctx context.Context, cfg *config.Config, log hclog.Logger) (_ *Daemon, err error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	d := &Daemon{
		cfg:      cfg,
		log:      log,
		synthQ:   queue.New[*task](),
		readyQ:   queue.New[*task](),
		finalQ:   make(chan *task, 64),
		circuits: map[string]*circuitEntry{},
		jobs:     map[string]*liveJob{},
		parked:   map[string]string{},
		started:  time.Now(),
		metrics:  metrics.New(),
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			d.closeResources()
		}
	}()
	if tightened, err := config.PrepareStateDir(cfg.StateDir); err != nil {
		return nil, err
	} else if tightened {
		log.Warn("state directory was writable by other users; tightened to mode 0700", "dir", cfg.StateDir)
	}
	d.budget = budget.New(cfg.Budget.Bytes, cfg.Budget.CriticalReserve)
	if d.journal, err = journal.OpenWith(cfg.Journal.Path, journal.Options{ReserveBytes: cfg.Journal.ReserveBytes}); err != nil {
		return nil, err // names the journal's path
	}
	for _, dmg := range d.journal.Repaired() {
		log.Error("a record of the job is damaged in the journal; the job is failed", "job", dmg.JobID, "reason", dmg.Reason)
	}
	// Partitions are memfds: an earlier run's died with it, nothing to reap.
	d.shm = shm.NewStore()
	if cfg.Timeline.Path != "" {
		rot := timeline.Rotation{MaxBytes: cfg.Timeline.MaxBytes, Keep: cfg.Timeline.Keep}
		if d.tl, err = timeline.Open(cfg.Timeline.Path, rot, log); err != nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
	}
	// Backends of an earlier host of this state directory that outlived it (the
	// parent-death signal and the watchdog normally end them) are reaped now.
	if pids, err := supervise.ReapStale(d.pidDir()); err != nil {
		log.Warn("reaping stale backends", "error", err)
	} else if len(pids) > 0 {
		log.Warn("killed backends left running by an earlier host", "pids", pids)
	}
	// Their sockets too (after the reap above: those backends are dead now).
	if dir, err := plugins.SocketDir(cfg.StateDir); err != nil {
		log.Warn("backend sockets go to the temporary directory", "reason", err)
	} else {
		d.socketDir = dir
		if n, err := plugins.ReapSockets(dir); err != nil {
			log.Warn("reaping stale backend sockets", "error", err)
		} else if n > 0 {
			log.Info("removed backend sockets left by an earlier run", "sockets", n)
		}
	}
	if err := d.loadCircuits(); err != nil {
		return nil, err
	}
	if err := d.startSynthesizers(ctx); err != nil { // synthplugin.go
		return nil, err
	}
	if err := d.startDevices(ctx); err != nil {
		return nil, err
	}
	for _, ce := range d.circuits {
		if err := d.sizeCircuit(ce); err != nil {
			return nil, err
		}
	}
	d.sizeSynthesis(runtime.NumCPU())
	if err := d.recover(); err != nil {
		return nil, err
	}
	return d, nil
}

// DiscoverCircuits lists the key sets in dir (files NAME.pk written by `zkhost
// keygen`) as circuits: each under its key name and, when no other key set comes
// from the same example circuit, under that circuit's name too ("merkle" for
// "merkle-d16-k4"). A daemon with no [[circuit]] in its config serves what it finds
// in <state_dir>/keys.
func DiscoverCircuits(dir string) ([]config.Circuit, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*"+circuit.ExtPK))
	if err != nil {
		return nil, err
	}
	var out []config.Circuit
	byBase := map[string][]string{}
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), circuit.ExtPK)
		out = append(out, config.Circuit{Name: name, Keys: dir})
		base, _, _ := strings.Cut(name, "-")
		byBase[base] = append(byBase[base], name)
	}
	for base, names := range byBase {
		if len(names) == 1 && names[0] != base {
			out = append(out, config.Circuit{Name: base, Keys: dir, CCS: "", PK: filepath.Join(dir, names[0]+circuit.ExtPK)})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// KeySet returns the directory and base name of the key set a [[circuit]]
// names: its keys directory and the name found there, or, for individual
// files, theirs (which must share a directory and base name).
func KeySet(cc config.Circuit) (dir, keyName string, err error) {
	if cc.PK != "" {
		return filepath.Dir(cc.PK), strings.TrimSuffix(filepath.Base(cc.PK), circuit.ExtPK), nil
	}
	keyName, err = circuit.ResolveName(cc.Keys, cc.Name)
	return cc.Keys, keyName, err
}

// loadCircuits loads every [[circuit]] and reserves its key's memory.
func (d *Daemon) loadCircuits() error {
	if len(d.cfg.Circuits) == 0 {
		dir := filepath.Join(d.cfg.StateDir, "keys")
		found, err := DiscoverCircuits(dir)
		if err != nil {
			return fmt.Errorf("discovering circuits in %s: %w", dir, err)
		}
		if len(found) == 0 {
			d.log.Warn("no [[circuit]] configured and no key sets found; jobs will be refused until keys are configured", "keys_dir", dir)
		}
		d.cfg.Circuits = found
	}
	loaded := map[string]*circuit.Circuit{}
	for i, cc := range d.cfg.Circuits {
		name := cc.Name
		dir, keyName, err := KeySet(cc)
		if err != nil {
			return fmt.Errorf("circuit[%d] %q: %w", i, name, err)
		}
		class := api.ClassNormal
		if cc.Class.Specified() {
			class = cc.Class
		}
		if c, ok := loaded[filepath.Join(dir, keyName)]; ok {
			// Another name for a key set already loaded (discovery's alias, or
			// two [[circuit]] entries on the same files): it shares the loaded
			// circuit and its key, with its own name and class.
			alias := *d.findEntry(c)
			alias.name, alias.class = name, class
			d.circuits[name] = &alias
			continue
		}
		c, err := circuit.Load(dir, keyName)
		if err != nil {
			return fmt.Errorf("circuit[%d] %q: %w", i, name, err)
		}
		loaded[filepath.Join(dir, keyName)] = c
		ce := &circuitEntry{
			name: name, c: c, class: class,
			key: sdk.KeyRef{ID: c.Name, Path: c.PKPath, Digest: c.PKDigest},
		}
		d.circuits[name] = ce
		// The proving key file is mapped by every backend that loads it; the page
		// cache holds one copy. Count it once, from the critical budget (it must
		// never block on batch work).
		st, err := os.Stat(c.PKPath)
		if err != nil {
			return fmt.Errorf("circuit[%d] %q: %w", i, name, err)
		}
		r, err := d.budget.TryReserve(api.ClassCritical, uint64(st.Size()), "key "+c.Name)
		if err != nil {
			return fmt.Errorf("circuit[%d] %q: its proving key (%s) does not fit the memory budget: %w", i, name, budget.FormatBytes(uint64(st.Size())), err)
		}
		d.keyResv = append(d.keyResv, r)
		d.log.Info("circuit loaded", "circuit", name, "key", c.Name, "constraints", c.NbConstraints, "wires", c.NbWires, "class", class)
	}
	return nil
}

// findEntry returns the entry that holds loaded circuit c.
func (d *Daemon) findEntry(c *circuit.Circuit) *circuitEntry {
	for _, ce := range d.circuits {
		if ce.c == c {
			return ce
		}
	}
	return nil
}

// sizeCircuit fills in a circuit's per-partition memory from its sizes and the
// largest per-constraint need any device declared.
func (d *Daemon) sizeCircuit(ce *circuitEntry) error {
	_, _, _, size := sdk.PartitionLayout(uint64(ce.c.NbWires), uint64(ce.c.NbConstraints))
	ce.shmBytes = size
	// gnark's solver holds W, A, B and C while it runs.
	ce.solverBytes = 32 * (uint64(ce.c.NbWires) + 3*uint64(ce.c.NbConstraints))
	var perConstraint uint64
	for _, de := range d.devices {
		perConstraint = max(perConstraint, de.dev.Description().HostBytesPerConstraint)
	}
	ce.backendBytes = perConstraint * ce.c.DomainSize
	if ce.synth == nil {
		// The solver's program is compiled once per circuit, which takes
		// seconds for a large one (BENCHMARKS.md, BenchmarkCompile): begin
		// now, beside the keys' loading, rather than at the first partition
		// with every worker waiting on it. Not waited for: Close does not
		// need it, and the first partition waits if it must.
		go ce.c.Program()
	}
	d.compactFor(ce)
	if ce.cw != nil {
		// A compact partition is reserved at its largest (every wire neither
		// 0 nor 1, no A and B) until it is written; then what it does not
		// take goes back.
		ce.shmBytes = compactShmBytes(ce)
	}
	if !d.budget.Fits(api.ClassCritical, ce.partitionBytes()) {
		return fmt.Errorf("circuit %q: one partition needs %s but the whole budget is %s", ce.name,
			budget.FormatBytes(ce.partitionBytes()), budget.FormatBytes(d.cfg.Budget.Bytes))
	}
	return nil
}

// pluginPolicy is how the daemon keeps its plugin processes, backends and
// synthesizers alike, running.
func (d *Daemon) pluginPolicy() supervise.Policy {
	return supervise.Policy{
		BackoffBase: d.cfg.Retry.BackoffBase,
		BackoffMax:  d.cfg.Retry.BackoffMax,
		CrashLimit:  d.cfg.Health.CrashLimit,
		CrashWindow: d.cfg.Health.CrashWindow,
		PidDir:      d.pidDir(),
	}
}

// startDevices launches one backend per [[device]].
func (d *Daemon) startDevices(ctx context.Context) error {
	for i, dc := range d.cfg.Devices {
		name := fmt.Sprintf("dev%d", i)
		// The device field survives in JSON logs, where a backend's own @module replaces the logger's name.
		lc := plugins.LaunchConfig{Path: dc.Backend, SHA256: dc.SHA256, Logger: d.log.Named("backend."+name).With("device", name), SocketDir: d.socketDir}
		lc.Env = append(lc.Env, sdk.LogLevelEnv+"="+d.cfg.LogLevel) // backends log at the host's level
		keys := make([]string, 0, len(dc.Options))
		for k := range dc.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			lc.Args = append(lc.Args, fmt.Sprintf("-%s=%s", k, dc.Options[k]))
		}
		for _, k := range slices.Sorted(maps.Keys(dc.Env)) {
			lc.Env = append(lc.Env, k+"="+dc.Env[k])
		}
		if dc.Index >= 0 {
			lc.Env = append(lc.Env, fmt.Sprintf("ZKHOST_DEVICE_INDEX=%d", dc.Index))
		}
		dev, err := device.Start(ctx, device.Options{
			Name:     name,
			Launch:   lc,
			InFlight: dc.InFlight,
			Policy:   d.pluginPolicy(),
			Accept:   d.checkCurves,
			Logger:   d.log.Named("device." + name),
		})
		if err != nil {
			return fmt.Errorf("device[%d]: %w", i, err)
		}
		de := &deviceEntry{dev: dev, backend: dc.Backend, busy: newBusyWindow(time.Minute), util: newUtilWindow(time.Minute)}
		d.devices = append(d.devices, de)
		desc := dev.Description()
		if !desc.Device.Available {
			d.log.Warn("device has no usable hardware; it takes no work", "device", name, "reason", desc.Device.Reason)
		}
		if sel := dc.Selector; sel != nil {
			if err := matchSelector(desc, sel); err != nil {
				return fmt.Errorf("device[%d]: %w", i, err)
			}
		}
	}
	if len(d.devices) == 0 {
		return errors.New("no device configured")
	}
	return d.checkCoverage()
}

// pidDir holds the pid files of running backends.
func (d *Daemon) pidDir() string { return filepath.Join(d.cfg.StateDir, "backends") }

// checkCurves refuses a backend that proves on none of the curves of the
// circuits the daemon serves: it could take no work. One that proves on some
// of them takes only those circuits' partitions (deviceEntry.refuses), so a GPU
// backend of one curve and a CPU backend of both serve a host together. Each
// device makes it at every start of its backend (device.Options.Accept); the
// circuits are loaded before the first and do not change after.
func (d *Daemon) checkCurves(desc sdk.Description) error {
	var needed []sdk.Curve
	for _, name := range d.circuitNames() {
		curve := d.circuits[name].c.Curve
		if slices.Contains(desc.Curves, curve) {
			return nil
		}
		if !slices.Contains(needed, curve) {
			needed = append(needed, curve)
		}
	}
	if len(needed) == 0 {
		return nil
	}
	declares := "declares no curve"
	if len(desc.Curves) > 0 {
		declares = fmt.Sprintf("proves on %v only", desc.Curves)
	}
	return fmt.Errorf("backend %s %s, and the circuits served need %v", desc.Name, declares, needed)
}

// checkCoverage refuses to serve a circuit that no configured device proves on:
// its jobs would wait for a device for ever.
func (d *Daemon) checkCoverage() error {
	for _, name := range d.circuitNames() {
		curve := d.circuits[name].c.Curve
		var declared, without []string
		for _, de := range d.devices {
			declared = append(declared, fmt.Sprintf("%s: %v", de.dev.Name(), de.dev.Description().Curves))
			if !de.provesOn(curve) {
				without = append(without, de.dev.Name())
			}
		}
		if len(without) == len(d.devices) {
			return fmt.Errorf("no device proves on %s, the curve of circuit %q (the devices declare %s): add a backend that does, such as the CPU backend",
				curve, name, strings.Join(declared, "; "))
		}
		for _, dev := range without {
			d.log.Info("device does not prove on the circuit's curve; other devices take its partitions", "device", dev, "circuit", name, "curve", curve)
		}
	}
	return nil
}

// matchSelector checks a device against a [[device]] selector.
func matchSelector(desc sdk.Description, sel *config.Selector) error {
	if sel.Model != "" && !strings.Contains(strings.ToLower(desc.Device.Model), strings.ToLower(sel.Model)) {
		return fmt.Errorf("selector wants model %q, backend reports %q", sel.Model, desc.Device.Model)
	}
	if sel.MinMemory > 0 && desc.Device.MemoryTotal < sel.MinMemory {
		return fmt.Errorf("selector wants at least %s of device memory, backend reports %s",
			budget.FormatBytes(sel.MinMemory), budget.FormatBytes(desc.Device.MemoryTotal))
	}
	return nil
}

// Run serves until ctx ends, then stops the pipeline and the backends.
func (d *Daemon) Run(ctx context.Context) error {
	workers := d.synthWorkers
	slots := 0
	for _, de := range d.devices {
		slots += de.dev.MaxInFlight()
	}
	d.stageTokens = make(chan struct{}, slots+workers)
	for i := range workers {
		d.goRun(func() {
			d.synthesisWorker(fmt.Sprintf("synth%d", i), true, func(ctx context.Context) (queue.Item[*task], error) { return d.synthQ.Pop(ctx) })
		})
	}
	// A critical partition takes the next free synthesis slot: it has a lane of
	// its own, so it never waits behind batch partitions blocked on the budget.
	d.goRun(func() {
		d.synthesisWorker("synth-critical", false, func(ctx context.Context) (queue.Item[*task], error) { return d.synthQ.PopClass(ctx, api.ClassCritical) })
	})
	for _, de := range d.devices {
		for range de.dev.MaxInFlight() {
			d.goRun(func() { d.deviceSlot(de) })
		}
	}
	// One finalizer per device slot (at least two): verification runs beside
	// verification, and their journal writes share commits (journal's group
	// commit), so a disk with slow syncs does not hold the devices back.
	for range 2*slots + 2 {
		d.goRun(d.finalizer)
	}
	for _, de := range d.devices {
		d.goRun(func() { d.sampleUtilization(de) })
	}
	if d.cfg.Keys.Preload {
		for _, de := range d.devices {
			d.goRun(func() { d.preloadKeys(de) })
		}
	}
	d.goRun(d.housekeeping)
	d.log.Info("serving", "devices", len(d.devices), "circuits", strings.Join(d.circuitNames(), ","), "synthesis_workers", workers,
		"budget", budget.FormatBytes(d.cfg.Budget.Bytes))
	select {
	case <-ctx.Done():
	case <-d.ctx.Done():
	}
	d.Close()
	return nil
}

func (d *Daemon) goRun(f func()) {
	d.wg.Go(f)
}

// Close stops the pipeline and every backend and removes shared-memory files.
// Unfinished jobs stay in the journal and resume at the next start.
func (d *Daemon) Close() {
	d.cancel()
	if d.journal != nil {
		d.journal.Interrupt() // a finalizer waiting for disk space must not hold up the stop
	}
	d.wg.Wait()
	d.closeOnce.Do(d.closeResources)
}

// closeResources closes what New opened. It runs once. The fields keep their
// values: an API call that passed its stopping check may still read them, and a
// closed journal or device answers with an error where a nil one would panic.
func (d *Daemon) closeResources() {
	// The plugins stop side by side: each stop is bounded (a process that
	// does not exit is sent SIGKILL after plugins.KillGrace), so the daemon's
	// stop takes one such bound however many children are stopped or wedged.
	var stops sync.WaitGroup
	for _, de := range d.devices {
		stops.Go(de.dev.Close)
	}
	for _, ce := range d.circuits {
		if ce.synth != nil {
			stops.Go(ce.synth.Close)
		}
	}
	stops.Wait()
	closed := map[*circuit.Circuit]bool{}
	for _, ce := range d.circuits {
		if !closed[ce.c] {
			ce.c.Close()
			closed[ce.c] = true
		}
	}
	d.closeCompact()
	if d.shm != nil {
		d.shm.Close()
	}
	if d.journal != nil {
		d.journal.Close()
	}
	if d.tl != nil {
		d.tl.Close()
		d.tl = nil
	}
}

// housekeeping evicts idle keys and prunes finished jobs past retention.
func (d *Daemon) housekeeping() {
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	flush := time.NewTicker(time.Second)
	defer flush.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-flush.C:
			if d.tl != nil {
				d.tl.Flush()
			}
			continue
		case <-tick.C:
		}
		for _, de := range d.devices {
			de.dev.EvictIdle(d.ctx, d.cfg.Keys.IdleEviction)
		}
		if r := d.cfg.Journal.Retention; r > 0 {
			if n, err := d.journal.PruneFinished(time.Now().Add(-r)); err != nil {
				d.log.Warn("pruning finished jobs", "error", err)
			} else if n > 0 {
				d.log.Info("pruned finished jobs past retention", "jobs", n, "retention", r)
				d.forgetFinished(time.Now().Add(-r))
			}
		}
	}
}

// sizeSynthesis sets the synthesis cores and workers: the config's where it
// gives them, else sized to the devices. The config's default leaves a
// quarter of the cpus to the rest of the machine, the backends' staging of
// full partitions above all (a 2^22 partition is 400 MB to read). When every
// device evaluates A and B itself (compact partitions for every circuit it
// serves) a backend's host work is a few megabytes and the proof's assembly,
// so synthesis gets all but one core per device: on bit-heavy circuits it is
// what paces the GPU.
func (d *Daemon) sizeSynthesis(cpus int) {
	s := d.cfg.Synthesis
	cores, workers := max(1, s.Cores), max(1, s.Workers)
	if !s.CoresSet && d.allCompact() {
		cores = max(cores, cpus-len(d.devices))
		if !s.WorkersSet {
			workers = cores
		}
		d.log.Info("synthesis sized to the devices: every partition is compact, so the backends need a core each",
			"cores", cores, "workers", workers, "cpus", cpus)
	}
	d.synthCores, d.synthWorkers = cores, workers
	d.cores = semaphore.NewWeighted(int64(cores))
}

// allCompact says every circuit the daemon serves is proved from compact
// partitions on every device (compactFor made the choice per circuit).
func (d *Daemon) allCompact() bool {
	if len(d.devices) == 0 || len(d.circuits) == 0 {
		return false
	}
	for _, ce := range d.circuits {
		if ce.cw == nil {
			return false
		}
	}
	return true
}
