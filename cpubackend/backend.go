package cpubackend

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/internal/version"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/keyreg"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/shm"
)

// Name identifies the backend in Describe.
const Name = "zkhost-backend-cpu"

// Version is the backend's version in Describe: the build's, as every zkhost binary
// reports it (internal/version).
var Version = version.String()

// HostBytesPerConstraint is the heap one in-flight proof needs per constraint, beyond
// the partition file the host counts and the key (LoadKey's HostBytes). refprover's
// BenchmarkProveMemory measures the peak heap (live objects and garbage not yet
// freed) with GOGC=20, as zkhost-backend-cpu runs, on chain circuits of 2^16 and
// 2^18 constraints, a little above gnark's own groth16.Prove; this leaves a margin
// above that peak (BENCHMARKS.md, "Heap per proof").
// Most of it is gnark-crypto's MSM bucket tables, which stop growing near 2^20
// points, so the figure over-reserves for very large circuits rather than
// under-reserving for the common ones.
const HostBytesPerConstraint = 1536

// Options configures a Backend.
type Options struct {
	// Threads is how many goroutines one proof's phases use; 0 means all cores.
	Threads int
	// MaxInFlight is how many Prove calls the backend accepts at once (default 1).
	// Proofs compute one at a time; the others wait with their partition mapped.
	MaxInFlight int
	// Logger receives the backend's logs; nil discards them.
	Logger hclog.Logger
	// WorkerPath, when set, is a binary that runs proofs in a child process, one
	// per loaded key, started with the key (it must call ServeWorker when its
	// first argument is WorkerArg; the backend's own executable, as
	// zkhost-backend-cpu sets it). A cancel then kills the proof at once instead
	// of waiting for its MSMs, and a new worker takes the killed one's place
	// (worker.go). Empty proves in this process.
	WorkerPath string
	// CompactW makes the backend take compact partitions (W alone, packed)
	// for keys the host sends with their constraints: it evaluates A and B
	// itself (compact.go). Off by default: on a CPU it saves the host's
	// writes but not the proof's work; it lets a CPU device serve beside GPUs
	// that take compact partitions, and tests the host's compact path.
	CompactW bool
	// MaxDomain, when above zero, is the largest key domain (constraints, a
	// power of two) the backend takes: a larger key is refused for good (a
	// permanent resource-exhausted error), and the host sends its partitions
	// to other devices. For a machine whose memory holds no larger key.
	MaxDomain uint64
}

// Backend is the CPU backend. It is safe for concurrent use.
type Backend struct {
	threads     int
	maxInFlight int
	log         hclog.Logger
	workerPath  string
	compactW    bool
	maxDomain   uint64
	// store holds the full partitions made from compact ones (compact.go).
	store *shm.Store

	// device is a one-slot semaphore: the proof holding it computes.
	device chan struct{}
	// lastWorker is the worker that computed the last proof (with workers);
	// read and written only by the proof holding device.
	lastWorker *warmWorker

	keys *keyreg.Registry[*loadedKey]

	// clock is where the last utilization sample ended; workers are the
	// proof workers running and the CPU time of those that ended
	// (utilization.go).
	clockMu sync.Mutex
	clock   cpuClock
	workers workerCPU
}

// loadedKey is a mapped, verified key file and its prover (which holds the FFT
// domain of its size): here for proofs in this process, or in the key's worker.
type loadedKey struct {
	id     string
	file   *keyfile.File
	prover *refprover.KeyProver // proves in this process; nil with workers
	fd     *os.File             // the same file, open for workers to inherit (nil without workers)
	worker *warmWorker          // the key's prove worker (nil without workers)
	// matrices are the circuit's constraints when the key took them
	// (Options.CompactW and KeyRef.Constraints), else nil.
	matrices *constraints.Matrices
}

// New returns a CPU backend configured by opts.
func New(opts Options) *Backend {
	b := &Backend{
		threads:     opts.Threads,
		maxInFlight: opts.MaxInFlight,
		log:         opts.Logger,
		workerPath:  opts.WorkerPath,
		compactW:    opts.CompactW,
		maxDomain:   opts.MaxDomain,
		device:      make(chan struct{}, 1),
	}
	if b.compactW {
		b.store = shm.NewStore()
	}
	if b.threads <= 0 {
		b.threads = runtime.NumCPU()
	}
	if b.maxInFlight <= 0 {
		b.maxInFlight = 1
	}
	if b.log == nil {
		b.log = hclog.NewNullLogger()
	}
	b.keys = keyreg.New(b.maxInFlight, func(k *loadedKey) { k.close(b.log) })
	if cpu, err := processCPU(); err == nil {
		b.clock = cpuClock{wall: time.Now(), cpu: cpu}
	}
	return b
}

var _ sdk.Backend = (*Backend)(nil)

// Describe reports the CPU (its model from /proc/cpuinfo, the machine's memory from
// /proc/meminfo), BLS12-381, and the memory one in-flight proof needs.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := ctx.Err(); err != nil {
		return sdk.Description{}, canceled(err, "describe")
	}
	model := runtime.GOARCH
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if m := parseCPUModel(f); m != "" {
			model = m
		}
		f.Close()
	}
	var total, free uint64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		total, free, err = parseMeminfo(f)
		f.Close()
		if err != nil {
			b.log.Warn("cannot read the machine's memory", "error", err)
		}
	}
	return sdk.Description{
		Name:        Name,
		Version:     Version,
		APIVersions: []uint32{sdk.APIVersion},
		Device: sdk.DeviceInfo{
			Kind:        "cpu",
			Model:       model,
			Available:   true,
			MemoryTotal: total,
			MemoryFree:  free,
		},
		Curves:                   []sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254},
		MaxInFlight:              b.maxInFlight,
		HostBytesPerConstraint:   b.hostBytesPerConstraint(),
		DeviceBytesPerConstraint: 0,
		CompactW:                 b.compactW,
	}, nil
}

// hostBytesPerConstraint is HostBytesPerConstraint, plus, when the backend
// takes compact partitions, the full partition it makes of each (W, A and B
// in a memfd, a wire per constraint: the example circuits' shape).
func (b *Backend) hostBytesPerConstraint() uint64 {
	if b.compactW {
		return HostBytesPerConstraint + 3*32
	}
	return HostBytesPerConstraint
}

// LoadKey maps the key file, checks that its header digest is key.Digest and that
// every section matches the header (one SHA-256 pass over the file), and keeps it
// mapped, with its FFT domain: in this process, or in the key's prove worker,
// started here (with WorkerPath) while the file is checked, which maps the same
// file. HostBytes is the
// file's size plus the domain's tables (the worker's mapping shares the file's
// pages with this process's; between proofs it holds no proof's heap).
// Loading a loaded ID with the same digest answers the same KeyInfo without touching
// the file; with another digest it is an ErrInvalidArgument.
func (b *Backend) LoadKey(ctx context.Context, ref sdk.KeyRef) (sdk.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return sdk.KeyInfo{}, canceled(err, "load key "+ref.ID)
	}
	return b.keys.Load(ctx, ref, func() (*loadedKey, sdk.KeyInfo, error) {
		begin := time.Now()
		fd, err := b.openForWorkers(ref)
		if err != nil {
			return nil, sdk.KeyInfo{}, err
		}
		// The key's worker starts (its process, the key's mapping, its FFT
		// domain) while this process checks the file: the two take turns
		// for nothing on a machine of few cores otherwise, and LoadKey
		// returns, so a proof reaches the worker, only once both are done.
		// The worker checks the header digest asked for itself.
		var starting chan startedWorker
		if fd != nil {
			starting = make(chan startedWorker, 1)
			go func() {
				w, err := b.startWorker(ctx, fd, ref.Digest)
				starting <- startedWorker{w, err}
			}()
		}
		f, err := keyreg.OpenKeyFile(ref)
		if err == nil && fd != nil {
			if err = sameFile(fd, ref); err != nil {
				f.Close()
			}
		}
		var started startedWorker
		if starting != nil {
			started = <-starting
		}
		if err != nil {
			if started.w != nil {
				started.w.close()
			}
			closeFile(fd)
			return nil, sdk.KeyInfo{}, err
		}
		pk := f.Header()
		if b.maxDomain > 0 && pk.DomainSize > b.maxDomain {
			// The worker started before the size was known: it goes too.
			if started.w != nil {
				started.w.close()
			}
			f.Close()
			closeFile(fd)
			return nil, sdk.KeyInfo{}, sdk.Permanentf(sdk.ErrResourceExhausted, "load key %s: its domain of %d constraints is above this backend's -max-domain %d",
				ref.ID, pk.DomainSize, b.maxDomain)
		}
		info := sdk.KeyInfo{HostBytes: uint64(f.Size())}
		k := &loadedKey{id: ref.ID, file: f, fd: fd, worker: started.w}
		if fd == nil { // proofs in this process use the domain's tables; a worker builds its own
			if k.prover, err = refprover.NewKeyProver(f); err != nil {
				f.Close()
				return nil, sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
			}
		} else if err = started.err; err != nil {
			f.Close()
			fd.Close()
			if ctx.Err() != nil {
				return nil, sdk.KeyInfo{}, canceled(ctx.Err(), "load key "+ref.ID)
			}
			return nil, sdk.KeyInfo{}, sdk.Errorf(sdk.KindOf(err), "load key %q: %v", ref.ID, err)
		}
		info.HostBytes += refprover.DomainBytes(pk.DomainSize)
		// Compact partitions are evaluated over the key's curve's field
		// (compact.go), BLS12-381's or BN254's.
		if b.compactW && ref.Constraints != nil {
			if k.matrices, err = takeConstraints(*ref.Constraints, f, ref.ID); err != nil {
				k.close(b.log)
				return nil, sdk.KeyInfo{}, err
			}
			info.CompactW = true
			info.HostBytes += uint64(ref.Constraints.Size)
		}
		b.log.Info("key loaded", "key", ref.ID, "path", ref.Path, "domain", pk.DomainSize, "wires", pk.NbWires,
			"host_bytes", info.HostBytes, "compact", info.CompactW, "took", time.Since(begin).String())
		return k, info, nil
	})
}

// openForWorkers opens ref's key file for workers to inherit, before it is checked,
// so that the file checked is the file they map (nil, nil without workers).
func (b *Backend) openForWorkers(ref sdk.KeyRef) (*os.File, error) {
	if b.workerPath == "" {
		return nil, nil
	}
	fd, err := os.Open(ref.Path)
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
	}
	return fd, nil
}

// sameFile checks that fd, opened before the key file at ref.Path was checked, is
// still the file there: one replaced in between is refused rather than proved with.
func sameFile(fd *os.File, ref sdk.KeyRef) error {
	opened, err1 := fd.Stat()
	checked, err2 := os.Stat(ref.Path)
	if err := errors.Join(err1, err2); err != nil {
		return sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
	}
	if !os.SameFile(opened, checked) {
		return sdk.Errorf(sdk.ErrDigestMismatch, "load key %q: %s was replaced while it was being checked", ref.ID, ref.Path)
	}
	return nil
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// close stops the key's worker and unmaps the key file.
func (k *loadedKey) close(log hclog.Logger) {
	if k.worker != nil {
		k.worker.close()
	}
	if err := k.file.Close(); err != nil {
		log.Warn("closing a key file", "key", k.id, "error", err)
	}
	closeFile(k.fd)
	k.prover = nil
	log.Info("key unloaded", "key", k.id)
}

// UnloadKey forgets the key. Its file is unmapped now, or when the last Prove using it
// returns. Unloading an unknown key is not an error.
func (b *Backend) UnloadKey(ctx context.Context, keyID string) error {
	b.keys.Unload(keyID)
	return nil
}

// Close unloads every key. Proofs still running keep theirs until they return.
func (b *Backend) Close() error {
	b.keys.UnloadAll()
	if b.store != nil {
		return b.store.Close()
	}
	return nil
}

// Prove maps the partition (checking its layout and seals), waits for the CPU, and
// proves it with refprover. The proof is gnark's encoding (Proof.WriteTo). Phases:
// map, then ntt, msm_g1, msm_g2 and finish. DeviceBusy counts the compute phases;
// the map phase (a few system calls and the page table, on one thread, before the
// CPU is taken) keeps no proving thread busy.
func (b *Backend) Prove(ctx context.Context, req sdk.ProveRequest) (sdk.ProveResult, error) {
	start := time.Now()
	lease, err := b.keys.Acquire(req.KeyID)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer lease.Release()
	kf := lease.Key().file
	h := req.Partition
	var phases []sdk.Phase
	if h.Format == sdk.FormatCompactW && lease.Key().matrices != nil {
		// A compact partition becomes a full one here (compact.go), which
		// the rest proves as any other.
		evalBegin := time.Now()
		full, err := b.expand(lease.Key(), h, req.KeyID)
		if err != nil {
			return sdk.ProveResult{}, err
		}
		defer b.store.Remove(full)
		phases = append(phases, sdk.Phase{Name: sdk.PhaseEval, Start: evalBegin.Sub(start), Wall: time.Since(evalBegin), DeviceBusy: time.Since(evalBegin)})
		h = full
	}
	if err := keyreg.CheckPartition(kf, h, req.KeyID); err != nil {
		return sdk.ProveResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return sdk.ProveResult{}, canceled(err, "prove")
	}

	mapBegin := time.Now()
	part, err := sdk.OpenPartition(h)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer func() {
		if err := part.Close(); err != nil {
			b.log.Warn("closing a partition", "path", h.Path, "error", err)
		}
	}()
	mapWall := time.Since(mapBegin)
	phases = append(phases, sdk.Phase{Name: sdk.PhaseMap, Start: mapBegin.Sub(start), Wall: mapWall})

	select {
	case b.device <- struct{}{}:
	case <-ctx.Done():
		return sdk.ProveResult{}, canceled(ctx.Err(), "prove (waiting for the CPU)")
	}
	offset := time.Since(start)
	proof, timings, err := b.prove(ctx, lease.Key(), part)
	<-b.device
	if err != nil {
		if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return sdk.ProveResult{}, canceled(err, "prove")
		}
		var typed *sdk.Error
		if errors.As(err, &typed) {
			return sdk.ProveResult{}, err
		}
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrInternal, "prove: %v", err)
	}
	phases = append(phases, timings.Phases(offset)...)
	var busy time.Duration
	for _, p := range phases {
		busy += p.DeviceBusy
	}
	wall := time.Since(start)
	b.log.Debug("proved", "key", req.KeyID, "constraints", h.NbConstraints, "wall", wall.String(), "busy", busy.String())
	return sdk.ProveResult{Proof: proof, Wall: wall, DeviceBusy: busy, Phases: phases}, nil
}

// prove computes the proof of a mapped partition, in a worker process when the
// backend has one, and returns it in gnark's encoding.
func (b *Backend) prove(ctx context.Context, k *loadedKey, part *sdk.Partition) ([]byte, refprover.Timings, error) {
	if k.worker != nil {
		// Another key's worker may still hold its last proof's heap: it gives
		// it back before this proof computes, so that proofs on the CPU use
		// one proof's memory at a time, as the host counts them.
		if last := b.lastWorker; last != nil && last != k.worker {
			if err := last.release(); err != nil {
				b.log.Warn("asking a prove worker to give its memory back", "error", err)
			}
		}
		b.lastWorker = k.worker
		return k.worker.prove(ctx, part.Handle())
	}
	return k.prover.Prove(ctx, part.Bytes(sdk.SectionW), part.Bytes(sdk.SectionA), part.Bytes(sdk.SectionB), b.threads)
}

// canceled wraps a context error as an ErrCanceled.
func canceled(err error, what string) error {
	return sdk.Errorf(sdk.ErrCanceled, "%s: %v", what, err)
}
