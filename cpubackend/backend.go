package cpubackend

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Name and Version identify the backend in Describe.
const (
	Name    = "zkhost-backend-cpu"
	Version = "0.1.0"
)

// HostBytesPerConstraint is the heap one in-flight proof needs per constraint, beyond
// the partition file the host counts and the key (LoadKey's HostBytes). Measured with
// refprover's BenchmarkProveMemory on chain circuits (wires ≈ constraints), 16 cores:
// a peak of about 850 bytes of live heap per constraint at 2^18 and 2^20 constraints
// with GOGC=20, as zkhost-backend-cpu runs. That peak is mostly gnark-crypto's MSM
// bucket tables, which stop growing near 2^20 (about 1 GB in all); above that the
// per-constraint need falls toward 250 bytes, so this over-reserves for very large
// circuits rather than under-reserving for the common ones.
const HostBytesPerConstraint = 1024

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

	mu       sync.Mutex
	keys     map[string]*loadedKey
	inFlight int
}

// loadedKey is a mapped, verified key file and the FFT domain of its size.
type loadedKey struct {
	id     string
	digest [32]byte
	file   *keyfile.File
	domain *fft.Domain // held so refprover's domain cache keeps it while the key is loaded
	info   sdk.KeyInfo

	users    int  // Prove calls using the key (guarded by Backend.mu)
	unloaded bool // UnloadKey was called: close when users drops to zero
}

// New returns a CPU backend configured by opts.
func New(opts Options) *Backend {
	b := &Backend{
		threads:     opts.Threads,
		maxInFlight: opts.MaxInFlight,
		log:         opts.Logger,
		device:      make(chan struct{}, 1),
		keys:        map[string]*loadedKey{},
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
	if ref.ID == "" {
		return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key: empty key ID")
	}
	if ref.Path == "" {
		return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: empty path", ref.ID)
	}
	if info, ok, err := b.loaded(ref); ok || err != nil {
		return info, err
	}
	if err := ctx.Err(); err != nil {
		return sdk.KeyInfo{}, canceled(err, "load key "+ref.ID)
	}
	begin := time.Now()
	k, err := openKey(ref)
	if err != nil {
		return sdk.KeyInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		k.close(b.log)
		return sdk.KeyInfo{}, canceled(err, "load key "+ref.ID)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if other, ok := b.keys[ref.ID]; ok { // loaded by a concurrent call meanwhile
		k.close(b.log)
		if other.digest != ref.Digest {
			return sdk.KeyInfo{}, differentDigest(ref, other.digest)
		}
		return other.info, nil
	}
	b.keys[ref.ID] = k
	pk := k.file.Key()
	b.log.Info("key loaded", "key", ref.ID, "path", ref.Path, "domain", pk.DomainSize, "wires", pk.NbWires,
		"host_bytes", k.info.HostBytes, "took", time.Since(begin))
	return k.info, nil
}

// loaded answers LoadKey for a key ID already loaded.
func (b *Backend) loaded(ref sdk.KeyRef) (sdk.KeyInfo, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[ref.ID]
	if !ok {
		return sdk.KeyInfo{}, false, nil
	}
	if k.digest != ref.Digest {
		return sdk.KeyInfo{}, true, differentDigest(ref, k.digest)
	}
	return k.info, true, nil
}

func differentDigest(ref sdk.KeyRef, loaded [32]byte) error {
	return sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: already loaded with digest %x, not %x (unload it first)", ref.ID, loaded, ref.Digest)
}

// openKey opens, checks and verifies one key file.
func openKey(ref sdk.KeyRef) (*loadedKey, error) {
	f, err := keyfile.Open(ref.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
		}
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: not a valid key file: %v", ref.ID, err)
	}
	k := &loadedKey{id: ref.ID, digest: ref.Digest, file: f}
	if got := f.HeaderDigest(); got != ref.Digest {
		f.Close()
		return nil, sdk.Errorf(sdk.ErrDigestMismatch, "load key %q: %s has header digest %x, the request says %x", ref.ID, ref.Path, got, ref.Digest)
	}
	if err := f.Verify(); err != nil {
		f.Close()
		return nil, sdk.Errorf(sdk.ErrDigestMismatch, "load key %q: %v", ref.ID, err)
	}
	pk := f.Key()
	k.domain, err = refprover.Domain(pk.DomainSize)
	if err != nil {
		f.Close()
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
	}
	k.info = sdk.KeyInfo{HostBytes: uint64(f.Size()) + refprover.DomainBytes(pk.DomainSize)}
	return k, nil
}

// close unmaps the key file.
func (k *loadedKey) close(log hclog.Logger) {
	if err := k.file.Close(); err != nil {
		log.Warn("closing a key file", "key", k.id, "error", err)
	}
	k.domain = nil
}

// UnloadKey forgets the key. Its file is unmapped now, or when the last Prove using it
// returns. Unloading an unknown key is not an error.
func (b *Backend) UnloadKey(ctx context.Context, keyID string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[keyID]
	if !ok {
		return nil
	}
	delete(b.keys, keyID)
	k.unloaded = true
	if k.users == 0 {
		k.close(b.log)
	}
	b.log.Info("key unloaded", "key", keyID, "proofs_running", k.users)
	return nil
}

// Close unloads every key. Proofs still running keep theirs until they return.
func (b *Backend) Close() error {
	b.mu.Lock()
	ids := make([]string, 0, len(b.keys))
	for id := range b.keys {
		ids = append(ids, id)
	}
	b.mu.Unlock()
	for _, id := range ids {
		if err := b.UnloadKey(context.Background(), id); err != nil {
			return err
		}
	}
	return nil
}

// acquire admits one Prove: it counts it against MaxInFlight and pins its key.
func (b *Backend) acquire(keyID string) (*loadedKey, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[keyID]
	if !ok {
		return nil, sdk.Errorf(sdk.ErrKeyNotLoaded, "prove: key %q is not loaded", keyID)
	}
	if b.inFlight >= b.maxInFlight {
		return nil, sdk.Errorf(sdk.ErrResourceExhausted, "prove: %d proofs already in flight, the backend takes %d", b.inFlight, b.maxInFlight)
	}
	b.inFlight++
	k.users++
	return k, nil
}

// release undoes acquire, closing the key if it was unloaded meanwhile.
func (b *Backend) release(k *loadedKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight--
	k.users--
	if k.unloaded && k.users == 0 {
		k.close(b.log)
	}
}

// Prove maps the partition (checking its layout and digest), waits for the CPU, and
// proves it with refprover. The proof is gnark's encoding (Proof.WriteTo). Phases:
// map, then ntt, msm_g1, msm_g2 and finish. DeviceBusy counts the compute phases in
// full and the map phase as one thread's share (its SHA-256 pass runs on one core).
func (b *Backend) Prove(ctx context.Context, req sdk.ProveRequest) (sdk.ProveResult, error) {
	start := time.Now()
	k, err := b.acquire(req.KeyID)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer b.release(k)
	pk := k.file.Key()
	h := req.Partition
	if h.NbWires != pk.NbWires {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition has %d wires, key %q has %d", h.NbWires, req.KeyID, pk.NbWires)
	}
	if h.NbConstraints > pk.DomainSize {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition has %d constraints, more than the domain size %d of key %q",
			h.NbConstraints, pk.DomainSize, req.KeyID)
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
		DeviceBusy: mapWall / time.Duration(b.threads),
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
	b.log.Debug("proved", "key", req.KeyID, "constraints", h.NbConstraints, "wall", wall, "busy", busy)
	return sdk.ProveResult{Proof: buf.Bytes(), Wall: wall, DeviceBusy: busy, Phases: phases}, nil
}

// canceled wraps a context error as an ErrCanceled.
func canceled(err error, what string) error {
	return sdk.Errorf(sdk.ErrCanceled, "%s: %v", what, err)
}
