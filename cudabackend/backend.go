package cudabackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/cudabackend/gpu"
	"github.com/zkhost/zkhost/internal/version"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/keyreg"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Name identifies the backend in Describe.
const Name = "zkhost-backend-cuda"

// Version is the backend's version in Describe: the build's, as every zkhost binary
// reports it (internal/version).
var Version = version.String()

// DefaultMaxInFlight is how many proofs the backend holds at once when not told.
// A slot idles its GPU while it waits on the host (the copy of its next
// partition into pinned staging, the round trip between two MSMs); the more
// the host is shared (two GPUs on one host), the longer those waits, and a
// fourth slot covers them, at no cost to a GPU alone. Each slot costs device
// and pinned host memory (docs/sizing.md). The measurements: BENCHMARKS.md,
// "Feeding the GPU" and "Several GPUs on one host".
const DefaultMaxInFlight = 4

// HostBytesPerConstraint is the host memory one proof in flight needs beyond the
// partition file: the pinned staging its slot holds, W, A and B (a wire per
// constraint, the example circuits' shape); the assembly is constant-size. The
// slots are allocated with the key, and LoadKey's HostBytes counts them exactly.
const HostBytesPerConstraint = 3 * gpu.FrBytes

// DefaultStageThreads is how many threads read a partition into its slot's
// pinned staging: a few reach the memory bandwidth one copy cannot. More make
// a proof proved alone faster, but under a backlog they take cores from the
// synthesis workers and the daemon proves fewer proofs a minute: the default
// serves the backlog (BENCHMARKS.md, "The partition read into the staging").
const DefaultStageThreads = 4

// deviceReserve is device memory left unadmitted for the CUDA context, the NTT
// tables and fragmentation.
const deviceReserve = 1 << 30

// Options configures a Backend.
type Options struct {
	// Device is the CUDA device ordinal.
	Device int
	// MaxInFlight is how many proofs run at once, each in its own slot on its
	// own stream (default DefaultMaxInFlight; a key gets fewer slots when that
	// keeps it resident, see planKey).
	MaxInFlight int
	// DeviceMemoryCap, when above zero and below the device's memory, is the
	// device memory the backend uses, as if the card had no more: a key whose
	// point sets, slots and proofs do not fit under it is streamed from pinned
	// host memory (gpu.PlanDevice) instead of refused. For smaller cards'
	// rehearsal on a large one, and to leave room to other users of the GPU.
	DeviceMemoryCap uint64
	// StageThreads is how many threads read a partition into its slot's
	// staging (default DefaultStageThreads). Under a backlog the read overlaps
	// other slots' device work and competes with synthesis for cores; a proof
	// proved alone waits for it.
	StageThreads int
	// MSMPrecompute is the most precomputed copies a resident key keeps of
	// each of its point sets, as room allows (gpu.PlanDevice): 0 means
	// gpu.MSMMaxDepth, 1 none (the points alone).
	MSMPrecompute int
	// Prove is how every key's proofs run on the device (the witness-aware
	// MSM or dense, the NTT's radix): for with/without comparisons; the zero
	// value is the default.
	Prove gpu.ProveOptions
	// Curves are the curves whose keys the backend loads and Describe
	// declares (nil: DefaultCurves). NoSnarkjsH refuses keys whose H points
	// are in snarkjs's form (keys imported from a .zkey), which the backend
	// proves by default; the host then proves them on another backend. Both
	// are for operators who keep a curve or a key form off one device.
	Curves     []sdk.Curve
	NoSnarkjsH bool
	Logger     hclog.Logger
}

// DefaultCurves are the curves a backend proves on when Options.Curves is
// nil: every curve the kernels take.
var DefaultCurves = []sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254}

// curveIDs maps the contract's curve names to gnark-crypto's ids: the curves
// Options.Curves may name.
var curveIDs = map[sdk.Curve]ecc.ID{sdk.CurveBLS12381: ecc.BLS12_381, sdk.CurveBN254: ecc.BN254}

// ParseCurves reads a comma-separated list of the contract's curve names
// ("bls12-381,bn254") into Options.Curves, or an error naming the unknown one.
func ParseCurves(list string) ([]sdk.Curve, error) {
	var out []sdk.Curve
	for _, name := range strings.Split(list, ",") {
		c := sdk.Curve(strings.TrimSpace(name))
		if _, ok := curveIDs[c]; !ok {
			return nil, fmt.Errorf("curve %q: want %s or %s", c, sdk.CurveBLS12381, sdk.CurveBN254)
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// CurveList is curves as ParseCurves reads them: names joined by commas.
func CurveList(curves []sdk.Curve) string {
	names := make([]string, len(curves))
	for i, c := range curves {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

// proves reports whether the backend loads keys on the curve id.
func (b *Backend) proves(id ecc.ID) bool {
	for _, c := range b.opts.Curves {
		if curveIDs[c] == id {
			return true
		}
	}
	return false
}

// key is a loaded key: its mapped file (for the assembly's small points), its
// bases resident on the device (or streamed), and its plan's slots, each what one proof in
// flight needs (device buffers, streams, pinned staging), allocated here once
// so that nothing between two proofs' device work allocates, frees or pins.
type key struct {
	file  *keyfile.File
	curve ecc.ID
	dev   *gpu.Groth16Key
	plan  gpu.DevicePlan
	shape gpu.KeyShape
	slots chan *gpu.Groth16Slot
	all   []*gpu.Groth16Slot
	// proofBytes is the device working memory one proof takes (its MSMs on
	// both streams), as msm.cu sizes it on this device; admitted per proof.
	proofBytes uint64
	// rows is the constraint system's rows when the key took its
	// constraints (compact partitions proved), else 0.
	rows uint64
}

// free releases the slots, then the key's device memory.
func (k *key) free() error {
	var errs []error
	for _, s := range k.all {
		errs = append(errs, s.Free())
	}
	errs = append(errs, k.dev.Free())
	return errors.Join(errs...)
}

// deviceBytes is what the key and its slots hold on the device, with the NTT
// tables of its domain (built at its first slot).
func (k *key) deviceBytes() uint64 {
	n := k.dev.DeviceBytes() + gpu.TablesBytes(k.shape, k.plan.Lean())
	for _, s := range k.all {
		n += s.DeviceBytes()
	}
	return n
}

// Backend is the CUDA backend. It is safe for concurrent use.
type Backend struct {
	opts Options
	log  hclog.Logger
	reg  *keyreg.Registry[*key]

	mu           sync.Mutex
	deviceInUse  uint64        // admitted by proofs in flight
	deviceKeys   uint64        // held by loaded keys
	deviceTotal  uint64        // the device's memory, or the cap when lower
	res          gpu.Residency // the MSM kernels' resident threads, for the estimates
	unavailable  error         // non-nil when there is no usable device
	model        string
	cudaVersions string
}

// New probes the device and returns the backend. A missing GPU is not an error
// here: Describe says so and Prove refuses.
func New(opts Options) *Backend {
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.StageThreads <= 0 {
		opts.StageThreads = DefaultStageThreads
	}
	if opts.MSMPrecompute == 0 {
		opts.MSMPrecompute = gpu.MSMMaxDepth
	}
	if opts.Curves == nil {
		opts.Curves = slices.Clone(DefaultCurves)
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	b := &Backend{opts: opts, log: opts.Logger, res: gpu.BoundResidency(0)}
	b.reg = keyreg.New(opts.MaxInFlight, func(k *key) {
		held := k.deviceBytes()
		if err := k.free(); err != nil {
			b.log.Warn("freeing a key's device memory", "error", err)
		}
		b.mu.Lock()
		b.deviceKeys -= held
		b.mu.Unlock()
		if err := k.file.Close(); err != nil {
			b.log.Warn("closing a key file", "error", err)
		}
	})
	info, err := gpu.DeviceInfo(opts.Device)
	if err != nil {
		b.unavailable = err
		b.log.Warn("no usable GPU; Prove will be refused", "device", opts.Device, "reason", err)
	} else {
		b.model, b.deviceTotal = info.Model, info.TotalBytes
		b.res = gpu.BoundResidency(info.SMCount)
		if res, err := gpu.DeviceResidency(opts.Device); err == nil {
			b.res = res
		} else {
			b.log.Warn("MSM residency unknown; device-memory estimates assume every SM full", "error", err)
		}
		if opts.DeviceMemoryCap > 0 && opts.DeviceMemoryCap < b.deviceTotal {
			b.deviceTotal = opts.DeviceMemoryCap
		}
		b.cudaVersions = fmt.Sprintf("cc %d.%d, driver CUDA %d, runtime %d", info.CCMajor, info.CCMinor, info.DriverVersion, info.RuntimeVersion)
		b.log.Info("GPU", "device", opts.Device, "model", info.Model, "memory", info.TotalBytes, "memory_used_at_most", b.deviceTotal, "versions", b.cudaVersions)
	}
	return b
}

// Describe reports the GPU, or its absence.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	d := sdk.Description{
		Name:                     Name,
		Version:                  Version,
		APIVersions:              []uint32{sdk.APIVersion},
		Curves:                   slices.Clone(b.opts.Curves),
		MaxInFlight:              b.opts.MaxInFlight,
		HostBytesPerConstraint:   HostBytesPerConstraint,
		DeviceBytesPerConstraint: perConstraint(b.res),
		Device:                   sdk.DeviceInfo{Kind: "cuda", Index: b.opts.Device},
		// The device evaluates A, B and C from the circuit's matrices: a
		// partition need carry only W, packed.
		CompactW: b.unavailable == nil,
	}
	if b.unavailable != nil {
		d.Device.Reason = b.unavailable.Error()
		return d, nil
	}
	d.Device.Available = true
	d.Device.Model = b.model
	d.Device.MemoryTotal = b.deviceTotal
	if info, err := gpu.DeviceInfo(b.opts.Device); err == nil {
		b.mu.Lock()
		ours := b.deviceTotal - min(b.deviceTotal, b.deviceInUse+b.deviceKeys)
		b.mu.Unlock()
		d.Device.MemoryFree = min(info.FreeBytes, ours)
	}
	return d, nil
}

// perConstraint is the device memory per constraint one proof in flight needs
// beyond its key and slot (which LoadKey's DeviceBytes counts): the MSM
// working memory of a resident key at 2^24 constraints (one wire each),
// rounded up.
func perConstraint(r gpu.Residency) uint64 {
	const logN = 24
	n := uint64(1) << logN
	return (gpu.PartitionDeviceBytes(logN, int(n), r) + n - 1) / n
}

func (b *Backend) refuse() error {
	return sdk.Errorf(sdk.ErrUnavailable, "no usable GPU (device %d): %v", b.opts.Device, b.unavailable)
}

// LoadKey maps and verifies the key file and uploads its point sets to the GPU.
func (b *Backend) LoadKey(ctx context.Context, ref sdk.KeyRef) (sdk.KeyInfo, error) {
	if b.unavailable != nil {
		return sdk.KeyInfo{}, b.refuse()
	}
	return b.reg.Load(ctx, ref, func() (*key, sdk.KeyInfo, error) {
		f, err := keyreg.OpenKeyFile(ref)
		if err != nil {
			return nil, sdk.KeyInfo{}, err
		}
		var k *key
		var info sdk.KeyInfo
		switch id := f.Curve(); {
		case !b.proves(id):
			err = sdk.Permanentf(sdk.ErrUnimplemented, "load key %s: a key on %s: this backend proves keys on %v (the -curves option)", ref.ID, curve.Title(id), b.opts.Curves)
		case id == ecc.BLS12_381:
			k, info, err = loadKeyOf(b, ref, f, keyfile.KeyOf[bls12381.G1Affine, bls12381.G2Affine])
		default: // BN254
			k, info, err = loadKeyOf(b, ref, f, keyfile.KeyOf[bn254.G1Affine, bn254.G2Affine])
		}
		if err != nil {
			f.Close()
		}
		return k, info, err
	})
}

// loadKeyOf is LoadKey's work once the key file f is open and its curve
// known: of reads its key (keyfile.KeyOf of the curve's points). The caller
// closes f on an error.
func loadKeyOf[G1, G2 any](b *Backend, ref sdk.KeyRef, f *keyfile.File, of func(*keyfile.File) (*keyfile.ProvingKey[G1, G2], error)) (*key, sdk.KeyInfo, error) {
	begin := time.Now()
	pk, err := of(f)
	if err != nil {
		return nil, sdk.KeyInfo{}, sdk.Permanentf(sdk.ErrInvalidArgument, "load key %s: %v", ref.ID, err)
	}
	if pk.HForm == keyfile.HFormSnarkjs && b.opts.NoSnarkjsH {
		// Final, as for a key too large for the device: the host proves the
		// key's partitions on a backend that takes it (the CPU's).
		return nil, sdk.KeyInfo{}, sdk.Permanentf(sdk.ErrUnimplemented,
			"load key %s: this key's H points are in snarkjs's form, which this backend was told not to prove (-snarkjs-h=false)", ref.ID)
	}
	shape := gpu.ShapeOf(pk)
	// The constraints, when sent, are opened and checked first: the plan
	// leaves room for them, unless that would stream a key that fits
	// resident without them (then the key proves full partitions).
	// Either curve's key takes them: the device evaluates over its field.
	var cs *constraints.Matrices
	var csBytes uint64
	if ref.Constraints != nil {
		m, closeCS, err := sdk.OpenConstraints(*ref.Constraints)
		if err != nil {
			return nil, sdk.KeyInfo{}, err
		}
		defer closeCS()
		if err := keyreg.CheckConstraints(f, m, ref.ID); err != nil {
			return nil, sdk.KeyInfo{}, err
		}
		cs, csBytes = m, gpu.ConstraintsDeviceBytes(m)
	}
	plan, err := b.planKey(shape, csBytes)
	if cs != nil && (err != nil || plan.Streamed()) {
		// Without them, a key that fits resident stays resident, one
		// that did not fit at all may fit lean, and a lean key takes
		// none (its proofs' W never is on the device): it then proves
		// full partitions.
		if alone, aerr := b.planKey(shape, 0); aerr == nil && (err != nil || plan.Lean() || !alone.Streamed()) {
			b.log.Warn("the key proves full partitions: with its constraints on the device it would not fit, or fit only streamed",
				"key", ref.ID, "constraints_bytes", csBytes, "plan", alone.String())
			plan, err, cs, csBytes = alone, nil, nil, 0
		}
	}
	if err != nil {
		return nil, sdk.KeyInfo{}, b.loadRefusal(shape, ref.ID, err)
	}
	need := plan.LoadBytes() + csBytes
	if err := b.admit(need, true); err != nil {
		return nil, sdk.KeyInfo{}, err
	}
	k, err := loadKey(b, pk, shape, plan, cs)
	b.mu.Lock()
	b.deviceInUse -= need
	if err == nil {
		b.deviceKeys += k.deviceBytes()
	}
	b.mu.Unlock()
	if err != nil {
		return nil, sdk.KeyInfo{}, deviceError("load key "+ref.ID, err)
	}
	k.file = f
	// The key file is mapped (page cache: one copy for every backend of
	// the machine, which the host's budget counts once, at circuit load);
	// a streamed key's points are registered in place, or copied into
	// pinned memory of this process's own where the device cannot.
	info := k.dev.Info()
	hostBytes := uint64(f.Size()) + info.PinnedCopyBytes
	for _, s := range k.all {
		hostBytes += s.HostBytes()
	}
	if plan.Streamed() && info.PinnedCopyBytes > 0 {
		b.log.Warn("the device cannot read the key file's mapping in place (cudaHostRegister read-only); its points were copied into pinned memory",
			"key", ref.ID, "pinned_copy_bytes", info.PinnedCopyBytes)
	}
	b.log.Info("key loaded", "key", ref.ID, "curve", curve.Title(shape.Curve), "domain", pk.DomainSize, "wires", pk.NbWires, "slots", len(k.all),
		"plan", plan.String(), "streamed", plan.Streamed(), "chunk", info.Chunk, "registered_ranges", info.Registered,
		"device_bytes", k.deviceBytes(), "proof_device_bytes", k.proofBytes, "proof_device_bytes_estimate", plan.ProofBytes,
		"pinned_bytes", hostBytes-uint64(f.Size()), "compact", k.rows > 0, "took", time.Since(begin).String())
	return k, sdk.KeyInfo{HostBytes: hostBytes, DeviceBytes: k.deviceBytes(), CompactW: k.rows > 0}, nil
}

// planKey decides whether the points of a key of shape s stay on the device or stream from the
// host, in the device memory not yet admitted less besides (the key's
// constraints): resident with MaxInFlight slots
// when the key, its slots and a proof in every slot fit; else resident with
// fewer slots, down to minResidentSlots; else streamed in the largest chunks
// that fit with MaxInFlight slots. A slot less costs a few points of
// utilization (BENCHMARKS.md, "Feeding the GPU"), while a streamed key copies
// all its points over PCIe for every proof: an H200 keeps a 2^26 key resident
// with three slots rather than streaming it with four.
func (b *Backend) planKey(shape gpu.KeyShape, besides uint64) (gpu.DevicePlan, error) {
	b.mu.Lock()
	room := b.limit() - min(b.limit(), b.deviceInUse+b.deviceKeys+besides)
	b.mu.Unlock()
	for slots := b.opts.MaxInFlight; slots >= min(minResidentSlots, b.opts.MaxInFlight); slots-- {
		if p, err := gpu.PlanDevice(shape, slots, room, b.res, b.opts.MSMPrecompute); err == nil && !p.Streamed() {
			return p, nil
		}
	}
	return gpu.PlanDevice(shape, b.opts.MaxInFlight, room, b.res, b.opts.MSMPrecompute)
}

// loadRefusal is LoadKey's error when no plan for a key of shape s fits the
// room left (err): final on this device (sdk.Permanentf) when not even the
// whole device, nothing else on it, holds the key, so that the host sends
// the key's partitions to a device with more memory; else retryable, since
// other keys hold the room now.
func (b *Backend) loadRefusal(s gpu.KeyShape, id string, err error) error {
	if _, whole := gpu.PlanDevice(s, 1, b.limit(), b.res, 0); whole != nil {
		return sdk.Permanentf(sdk.ErrResourceExhausted, "load key %s on GPU %d: %v", id, b.opts.Device, whole)
	}
	return sdk.Errorf(sdk.ErrResourceExhausted, "load key %s: %v", id, err)
}

// minResidentSlots is the fewest slots planKey gives a key to keep it
// resident: with one, the GPU idles through every host round trip.
const minResidentSlots = 2

// loadKey uploads pk's bases (or sets up their streaming) and cs, the
// circuit's constraints when not nil, and allocates the plan's slots for its
// proofs. shape is pk's.
func loadKey[G1, G2 any](b *Backend, pk *keyfile.ProvingKey[G1, G2], shape gpu.KeyShape, plan gpu.DevicePlan, cs *constraints.Matrices) (*key, error) {
	dk, err := gpu.LoadGroth16KeyPlan(b.opts.Device, pk, plan, b.opts.Prove)
	if err != nil {
		return nil, err
	}
	if cs != nil {
		if err := dk.SetConstraints(cs); err != nil {
			if ferr := dk.Free(); ferr != nil {
				b.log.Warn("freeing a key after its constraints failed", "error", ferr)
			}
			return nil, err
		}
	}
	info := dk.Info()
	k := &key{curve: shape.Curve, dev: dk, plan: plan, shape: shape, proofBytes: gpu.ProofPoolBytes(info.WorkG1, info.WorkG2), slots: make(chan *gpu.Groth16Slot, plan.Slots)}
	if cs != nil {
		k.rows = cs.NbConstraints()
	}
	for range plan.Slots {
		s, err := dk.NewSlot()
		if err != nil {
			if ferr := k.free(); ferr != nil {
				b.log.Warn("freeing a key after a failed slot", "error", ferr)
			}
			return nil, err
		}
		k.all = append(k.all, s)
		k.slots <- s
	}
	return k, nil
}

// UnloadKey frees the key's device memory (when no proof uses it any more).
func (b *Backend) UnloadKey(ctx context.Context, keyID string) error {
	b.reg.Unload(keyID)
	return nil
}

// Close unloads every key.
func (b *Backend) Close() error {
	b.reg.UnloadAll()
	return nil
}

// limit is the device memory admission hands out: the device's (or the cap)
// less deviceReserve. Called with mu held or before any concurrency.
func (b *Backend) limit() uint64 {
	if b.deviceTotal > deviceReserve {
		return b.deviceTotal - deviceReserve
	}
	return b.deviceTotal
}

// admit reserves device bytes for a proof (or a key upload) or refuses with a
// retryable ErrResourceExhausted: admission never over-commits the device.
func (b *Backend) admit(need uint64, forKey bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.limit()
	used := b.deviceInUse + b.deviceKeys
	if used+need > limit {
		what := "this proof"
		if forKey {
			what = "this key"
		}
		return sdk.Errorf(sdk.ErrResourceExhausted, "GPU memory: %s needs %d MiB, %d MiB of %d MiB admitted are in use",
			what, need>>20, used>>20, limit>>20)
	}
	b.deviceInUse += need
	return nil
}

// Prove proves one partition on the GPU.
func (b *Backend) Prove(ctx context.Context, req sdk.ProveRequest) (sdk.ProveResult, error) {
	start := time.Now()
	if b.unavailable != nil {
		return sdk.ProveResult{}, b.refuse()
	}
	lease, err := b.reg.Acquire(req.KeyID)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer lease.Release()
	k := lease.Key()
	h := req.Partition
	compact := h.Format == sdk.FormatCompactW
	if compact {
		err = keyreg.CheckCompactPartition(k.file, h, req.KeyID, k.rows)
	} else {
		err = keyreg.CheckPartition(k.file, h, req.KeyID)
	}
	if err != nil {
		return sdk.ProveResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove: %v", err)
	}

	// A slot is free whenever the host keeps at most the key's slots here
	// (MaxInFlight, or fewer when planKey kept the key resident with fewer);
	// waiting covers a host that sends more. The proof's working memory is
	// admitted once it holds a slot: the key's plan fits a proof in every slot.
	var slot *gpu.Groth16Slot
	select {
	case slot = <-k.slots:
	case <-ctx.Done():
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove (waiting for a slot): %v", ctx.Err())
	}
	released := false
	release := func() {
		if !released {
			released = true
			k.slots <- slot
		}
	}
	defer release()
	need := k.proofBytes
	if err := b.admit(need, false); err != nil {
		return sdk.ProveResult{}, err
	}
	defer func() {
		b.mu.Lock()
		b.deviceInUse -= need
		b.mu.Unlock()
	}()

	var run slotRun
	switch k.curve {
	case ecc.BLS12_381:
		run, err = proveInSlot(ctx, curve.BLS12381{}, b, k, slot, h, release)
	case ecc.BN254:
		run, err = proveInSlot(ctx, curve.BN254{}, b, k, slot, h, release)
	default:
		err = sdk.Errorf(sdk.ErrInternal, "prove: a key on %s", curve.Title(k.curve)) // LoadKey took none
	}
	if err != nil {
		return sdk.ProveResult{}, err
	}
	mapBegin, mapWall, devBegin, timing := run.mapBegin, run.mapWall, run.devBegin, run.timing
	finBegin, finWall, devWall := run.finBegin, run.finWall, run.devWall

	// Device phases, placed from devBegin: upload, H and the G1 MSMs back to back
	// on the proof's stream, the G2 MSM on its own stream beside them. Each
	// phase's busy time counts the device once: the G2 MSM only past the G1 end.
	// A lean key's H runs beside its G1 MSMs, whose span is the proof's from
	// its start (groth16.h): H inside it, counted there.
	off := devBegin.Sub(start)
	ntt := timing.Upload + timing.Evaluate // where H starts
	g1Start, nttBusy := ntt+timing.NTT, timing.NTT
	if k.plan.Lean() {
		g1Start, nttBusy = ntt, 0
	}
	g1End := g1Start + timing.MSMG1
	phases := []sdk.Phase{
		{Name: sdk.PhaseMap, Start: mapBegin.Sub(start), Wall: mapWall},
		{Name: sdk.PhaseUpload, Start: off, Wall: timing.Upload, DeviceBusy: timing.Upload},
	}
	if compact {
		phases = append(phases, sdk.Phase{Name: sdk.PhaseEval, Start: off + timing.Upload, Wall: timing.Evaluate, DeviceBusy: timing.Evaluate})
	}
	phases = append(phases, []sdk.Phase{
		{Name: sdk.PhaseNTT, Start: off + ntt, Wall: timing.NTT, DeviceBusy: nttBusy},
		{Name: sdk.PhaseMSMG1, Start: off + g1Start, Wall: timing.MSMG1, DeviceBusy: timing.MSMG1},
		{Name: sdk.PhaseMSMG2, Start: off + timing.MSMG2Start, Wall: timing.MSMG2, DeviceBusy: max(0, timing.MSMG2Start+timing.MSMG2-g1End)},
		{Name: sdk.PhaseFinish, Start: finBegin.Sub(start), Wall: finWall},
	}...)
	wall := time.Since(start)
	busy := timing.Total
	b.log.Debug("proved", "key", req.KeyID, "constraints", h.NbConstraints, "wall", wall.String(), "device", devWall.String(), "busy", busy.String())
	return sdk.ProveResult{Proof: run.proof, Wall: wall, DeviceBusy: busy, Phases: phases}, nil
}

// slotRun is what proveInSlot did: the proof's bytes, when each step began and
// how long it took, and the device's timing.
type slotRun struct {
	proof                        []byte
	mapBegin, devBegin, finBegin time.Time
	mapWall, devWall, finWall    time.Duration
	timing                       gpu.Groth16Timing
}

// proveInSlot is Prove's work in the slot it holds, for k, a key on the curve
// c binds: it reads the partition h into the slot's staging, proves it on the
// device, calls release (the slot is free for the next proof while this one
// is assembled) and assembles the proof with fresh r and s.
func proveInSlot[S ~[4]uint64, PS curve.Scalar[S], G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], b *Backend, k *key, slot *gpu.Groth16Slot, h sdk.PartitionHandle, release func()) (slotRun, error) {
	var run slotRun
	pk, err := keyfile.KeyOf[G1, G2](k.file)
	if err != nil {
		return run, sdk.Errorf(sdk.ErrInternal, "prove: %v", err)
	}
	compact := h.Format == sdk.FormatCompactW
	// Map: read the sealed partition into the slot's pinned staging, on CPU
	// threads, while other slots keep the GPU busy; the device reads the
	// staging. Read, not mapped and copied: no page table to build
	// (BENCHMARKS.md, "The partition read into the staging").
	run.mapBegin = time.Now()
	// ReadPartition's errors are sdk kinds already (a bad handle or file):
	// they go back as they are, not through deviceError.
	var readErr error
	if compact {
		err = gpu.StageCompactWithCurve(slot, int(h.NbWires), int(h.NbOther), func(other, bits []uint64, values []S) error {
			readErr = sdk.ReadCompactPartition(h, other, bits, values, b.opts.StageThreads)
			return readErr
		})
	} else {
		err = gpu.StageWithCurve(slot, int(h.NbWires), int(h.NbConstraints), func(w, a, bv []S) error {
			readErr = sdk.ReadPartition(h, w, a, bv, b.opts.StageThreads)
			return readErr
		})
	}
	if readErr != nil {
		return run, readErr
	}
	if err != nil {
		return run, deviceError("prove", err)
	}
	run.mapWall = time.Since(run.mapBegin)
	if err := ctx.Err(); err != nil {
		return run, sdk.Errorf(sdk.ErrCanceled, "prove: %v", err)
	}

	run.devBegin = time.Now()
	var out refprover.MSMResults[G1J, G2J]
	if compact {
		out, run.timing, err = gpu.ProveCompactCurve(c, k.dev, slot, int(h.NbConstraints), int(h.NbOther))
	} else {
		out, run.timing, err = gpu.ProveCurve(c, k.dev, slot, int(h.NbConstraints))
	}
	var unsat *gpu.UnsatisfiedError
	if errors.As(err, &unsat) {
		return run, sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition's W does not satisfy constraint %d (checked on the device)", unsat.Constraint)
	}
	if err != nil {
		return run, deviceError("prove", err)
	}
	run.devWall = time.Since(run.devBegin)
	release()

	run.finBegin = time.Now()
	r, s, err := refprover.RandomRS[S, PS]()
	if err != nil {
		return run, sdk.Errorf(sdk.ErrInternal, "prove: randomness: %v", err)
	}
	proof := refprover.Assemble[S, PS](c, pk, out, r, s)
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		return run, sdk.Errorf(sdk.ErrInternal, "prove: encoding the proof: %v", err)
	}
	run.proof = buf.Bytes()
	run.finWall = time.Since(run.finBegin)
	return run, nil
}

// deviceError types a driver error for the host.
func deviceError(what string, err error) error {
	switch {
	case errors.Is(err, gpu.ErrOutOfMemory):
		return sdk.Errorf(sdk.ErrResourceExhausted, "%s: %v", what, err)
	case errors.Is(err, gpu.ErrUnavailable):
		return sdk.Errorf(sdk.ErrUnavailable, "%s: %v", what, err)
	case errors.Is(err, gpu.ErrInvalid):
		return sdk.Errorf(sdk.ErrInvalidArgument, "%s: %v", what, err)
	}
	return sdk.Errorf(sdk.ErrInternal, "%s: %v", what, err)
}
