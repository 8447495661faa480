package cpubackend

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/keyreg"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Name and Version identify the backend in Describe.
const (
	Name    = "zkhost-backend-cpu"
	Version = "0.1.0"
)

// HostBytesPerConstraint is the heap one in-flight proof needs per constraint, beyond
// the partition file the host counts and the key (LoadKey's HostBytes). refprover's
// BenchmarkProveMemory measures the peak heap (live objects and garbage not yet
// freed) at up to about 1,350 bytes per constraint with GOGC=20, as
// zkhost-backend-cpu runs, on chain circuits of 2^16 and 2^18 constraints on 2 cores
// (BENCHMARKS.md; gnark's own groth16.Prove peaks at 1,170-1,260 in the same run).
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
}

// Backend is the CPU backend. It is safe for concurrent use.
type Backend struct {
	threads     int
	maxInFlight int
	log         hclog.Logger

	// device is a one-slot semaphore: the proof holding it computes.
	device chan struct{}

	keys *keyreg.Registry[*loadedKey]
}

// loadedKey is a mapped, verified key file and the FFT domain of its size.
type loadedKey struct {
	id     string
	file   *keyfile.File
	domain *fft.Domain // held so refprover's domain cache keeps it while the key is loaded
}

// New returns a CPU backend configured by opts.
func New(opts Options) *Backend {
	b := &Backend{
		threads:     opts.Threads,
		maxInFlight: opts.MaxInFlight,
		log:         opts.Logger,
		device:      make(chan struct{}, 1),
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
		Curves:                   []sdk.Curve{sdk.CurveBLS12381},
		MaxInFlight:              b.maxInFlight,
		HostBytesPerConstraint:   HostBytesPerConstraint,
		DeviceBytesPerConstraint: 0,
	}, nil
}

// LoadKey maps the key file, checks that its header digest is key.Digest and that
// every section matches the header (one SHA-256 pass over the file), and keeps it
// mapped with its FFT domain. HostBytes is the file's size plus the domain's tables.
// Loading a loaded ID with the same digest answers the same KeyInfo without touching
// the file; with another digest it is an ErrInvalidArgument.
func (b *Backend) LoadKey(ctx context.Context, ref sdk.KeyRef) (sdk.KeyInfo, error) {
	if err := ctx.Err(); err != nil {
		return sdk.KeyInfo{}, canceled(err, "load key "+ref.ID)
	}
	return b.keys.Load(ctx, ref, func() (*loadedKey, sdk.KeyInfo, error) {
		begin := time.Now()
		f, err := keyreg.OpenKeyFile(ref)
		if err != nil {
			return nil, sdk.KeyInfo{}, err
		}
		pk := f.Key()
		domain, err := refprover.Domain(pk.DomainSize)
		if err != nil {
			f.Close()
			return nil, sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
		}
		info := sdk.KeyInfo{HostBytes: uint64(f.Size()) + refprover.DomainBytes(pk.DomainSize)}
		b.log.Info("key loaded", "key", ref.ID, "path", ref.Path, "domain", pk.DomainSize, "wires", pk.NbWires,
			"host_bytes", info.HostBytes, "took", time.Since(begin).String())
		return &loadedKey{id: ref.ID, file: f, domain: domain}, info, nil
	})
}

// close unmaps the key file.
func (k *loadedKey) close(log hclog.Logger) {
	if err := k.file.Close(); err != nil {
		log.Warn("closing a key file", "key", k.id, "error", err)
	}
	k.domain = nil
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
	return nil
}

// Prove maps the partition (checking its layout and digest), waits for the CPU, and
// proves it with refprover. The proof is gnark's encoding (Proof.WriteTo). Phases:
// map, then ntt, msm_g1, msm_g2 and finish. DeviceBusy counts the compute phases in
// full and the map phase as the share of the threads its digest pass kept busy
// (sdk.PartitionDigest hashes one chunk per core, on up to GOMAXPROCS cores).
func (b *Backend) Prove(ctx context.Context, req sdk.ProveRequest) (sdk.ProveResult, error) {
	start := time.Now()
	lease, err := b.keys.Acquire(req.KeyID)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer lease.Release()
	pk := lease.Key().file.Key()
	h := req.Partition
	if err := keyreg.CheckPartition(pk, h, req.KeyID); err != nil {
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
	phases := []sdk.Phase{{
		Name:       sdk.PhaseMap,
		Start:      mapBegin.Sub(start),
		Wall:       mapWall,
		DeviceBusy: mapWall * time.Duration(min(digestCores(h.Size), b.threads)) / time.Duration(b.threads),
	}}

	select {
	case b.device <- struct{}{}:
	case <-ctx.Done():
		return sdk.ProveResult{}, canceled(ctx.Err(), "prove (waiting for the CPU)")
	}
	offset := time.Since(start)
	proof, timings, err := refprover.Prove(ctx, pk, part.W(), part.A(), part.B(), b.threads)
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
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrInternal, "prove: encoding the proof: %v", err)
	}
	phases = append(phases, timings.Phases(offset)...)
	var busy time.Duration
	for _, p := range phases {
		busy += p.DeviceBusy
	}
	wall := time.Since(start)
	b.log.Debug("proved", "key", req.KeyID, "constraints", h.NbConstraints, "wall", wall.String(), "busy", busy.String())
	return sdk.ProveResult{Proof: buf.Bytes(), Wall: wall, DeviceBusy: busy, Phases: phases}, nil
}

// digestCores is how many cores sdk.PartitionDigest hashes a file of size bytes on:
// one per sdk.DigestChunk-byte chunk, at most GOMAXPROCS.
func digestCores(size int64) int {
	chunks := (size + sdk.DigestChunk - 1) / sdk.DigestChunk
	return int(max(1, min(int64(runtime.GOMAXPROCS(0)), chunks)))
}

// canceled wraps a context error as an ErrCanceled.
func canceled(err error, what string) error {
	return sdk.Errorf(sdk.ErrCanceled, "%s: %v", what, err)
}
