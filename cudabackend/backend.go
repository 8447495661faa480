package cudabackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/cudabackend/gpu"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/keyreg"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Name and Version identify the backend in Describe.
const (
	Name    = "zkhost-backend-cuda"
	Version = "0.1.0"
)

// HostBytesPerConstraint is the host memory one proof in flight needs beyond the
// partition file: none of the vectors are copied on the host (they are pinned and
// uploaded from the mapping); the assembly is constant-size.
const HostBytesPerConstraint = 0

// deviceReserve is device memory left unadmitted for the CUDA context, the NTT
// tables and fragmentation.
const deviceReserve = 1 << 30

// Options configures a Backend.
type Options struct {
	// Device is the CUDA device ordinal.
	Device int
	// MaxInFlight is how many proofs run at once, each on its own stream
	// (default 2: one uploads while the other computes).
	MaxInFlight int
	Logger      hclog.Logger
}

// key is a loaded key: its mapped file (for the assembly's small points) and
// its bases resident on the device.
type key struct {
	file *keyfile.File
	dev  *gpu.Groth16Key
}

// Backend is the CUDA backend. It is safe for concurrent use.
type Backend struct {
	opts Options
	log  hclog.Logger
	reg  *keyreg.Registry[*key]

	mu           sync.Mutex
	deviceInUse  uint64 // admitted by proofs in flight
	deviceKeys   uint64 // held by loaded keys
	deviceTotal  uint64
	unavailable  error // non-nil when there is no usable device
	model        string
	cudaVersions string
}

// New probes the device and returns the backend. A missing GPU is not an error
// here: Describe says so and Prove refuses.
func New(opts Options) *Backend {
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 2
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	b := &Backend{opts: opts, log: opts.Logger}
	b.reg = keyreg.New(opts.MaxInFlight, func(k *key) {
		if err := k.dev.Free(); err != nil {
			b.log.Warn("freeing a key's device memory", "error", err)
		}
		b.mu.Lock()
		b.deviceKeys -= k.dev.DeviceBytes()
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
		b.cudaVersions = fmt.Sprintf("cc %d.%d, driver CUDA %d, runtime %d", info.CCMajor, info.CCMinor, info.DriverVersion, info.RuntimeVersion)
		b.log.Info("GPU", "device", opts.Device, "model", info.Model, "memory", info.TotalBytes, "versions", b.cudaVersions)
	}
	return b
}

// Describe reports the GPU, or its absence.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	d := sdk.Description{
		Name:                     Name,
		Version:                  Version,
		APIVersions:              []uint32{sdk.APIVersion},
		Curves:                   []sdk.Curve{sdk.CurveBLS12381},
		MaxInFlight:              b.opts.MaxInFlight,
		HostBytesPerConstraint:   HostBytesPerConstraint,
		DeviceBytesPerConstraint: gpu.PartitionDeviceBytes(20, 1<<20) >> 20,
		Device:                   sdk.DeviceInfo{Kind: "cuda", Index: b.opts.Device},
	}
	if b.unavailable != nil {
		d.Device.Reason = b.unavailable.Error()
		return d, nil
	}
	d.Device.Available = true
	d.Device.Model = b.model
	d.Device.MemoryTotal = b.deviceTotal
	if info, err := gpu.DeviceInfo(b.opts.Device); err == nil {
		d.Device.MemoryFree = info.FreeBytes
	}
	return d, nil
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
		begin := time.Now()
		f, err := keyreg.OpenKeyFile(ref)
		if err != nil {
			return nil, sdk.KeyInfo{}, err
		}
		pk := f.Key()
		need := gpu.KeyDeviceBytes(pk)
		if err := b.admit(need, true); err != nil {
			f.Close()
			return nil, sdk.KeyInfo{}, err
		}
		dk, err := gpu.LoadGroth16Key(b.opts.Device, pk)
		b.mu.Lock()
		b.deviceInUse -= need
		if err == nil {
			b.deviceKeys += dk.DeviceBytes()
		}
		b.mu.Unlock()
		if err != nil {
			f.Close()
			return nil, sdk.KeyInfo{}, deviceError("load key "+ref.ID, err)
		}
		b.log.Info("key loaded", "key", ref.ID, "domain", pk.DomainSize, "wires", pk.NbWires,
			"device_bytes", dk.DeviceBytes(), "took", time.Since(begin).String())
		return &key{file: f, dev: dk}, sdk.KeyInfo{HostBytes: uint64(f.Size()), DeviceBytes: dk.DeviceBytes()}, nil
	})
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

// admit reserves device bytes for a proof (or a key upload) or refuses with a
// retryable ErrResourceExhausted: admission never over-commits the device.
func (b *Backend) admit(need uint64, forKey bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := b.deviceTotal
	if limit > deviceReserve {
		limit -= deviceReserve
	}
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
	pk := k.file.Key()
	h := req.Partition
	if err := keyreg.CheckPartition(pk, h, req.KeyID); err != nil {
		return sdk.ProveResult{}, err
	}
	logN := uint32(bits.TrailingZeros64(pk.DomainSize))
	need := gpu.PartitionDeviceBytes(logN, int(pk.NbWires))
	if err := b.admit(need, false); err != nil {
		return sdk.ProveResult{}, err
	}
	defer func() {
		b.mu.Lock()
		b.deviceInUse -= need
		b.mu.Unlock()
	}()
	if err := ctx.Err(); err != nil {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove: %v", err)
	}

	mapBegin := time.Now()
	part, err := sdk.OpenPartition(h)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer part.Close()
	// Pinned memory makes the upload a DMA at full PCIe speed instead of a copy
	// through a staging buffer. Pinning can fail (locked-memory limits); the
	// upload then runs from pageable memory, slower but correct.
	raw := part.Raw()
	pinned := gpu.HostRegister(raw) == nil
	defer func() {
		if pinned {
			gpu.HostUnregister(raw)
		}
	}()
	mapWall := time.Since(mapBegin)
	if err := ctx.Err(); err != nil {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove: %v", err)
	}

	devBegin := time.Now()
	out, timing, err := k.dev.Prove(part.W(), part.A(), part.B())
	if err != nil {
		return sdk.ProveResult{}, deviceError("prove", err)
	}
	devWall := time.Since(devBegin)

	finBegin := time.Now()
	r, s, err := refprover.RandomRS()
	if err != nil {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrInternal, "prove: randomness: %v", err)
	}
	proof := refprover.Assemble(pk, out, r, s)
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrInternal, "prove: encoding the proof: %v", err)
	}
	finWall := time.Since(finBegin)

	// Device phases, placed from devBegin: upload, H and the G1 MSMs back to back
	// on the proof's stream, the G2 MSM on its own stream beside them. Each
	// phase's busy time counts the device once: the G2 MSM only past the G1 end.
	off := devBegin.Sub(start)
	g1End := timing.Upload + timing.NTT + timing.MSMG1
	phases := []sdk.Phase{
		{Name: sdk.PhaseMap, Start: mapBegin.Sub(start), Wall: mapWall},
		{Name: sdk.PhaseUpload, Start: off, Wall: timing.Upload, DeviceBusy: timing.Upload},
		{Name: sdk.PhaseNTT, Start: off + timing.Upload, Wall: timing.NTT, DeviceBusy: timing.NTT},
		{Name: sdk.PhaseMSMG1, Start: off + timing.Upload + timing.NTT, Wall: timing.MSMG1, DeviceBusy: timing.MSMG1},
		{Name: sdk.PhaseMSMG2, Start: off + timing.MSMG2Start, Wall: timing.MSMG2, DeviceBusy: max(0, timing.MSMG2Start+timing.MSMG2-g1End)},
		{Name: sdk.PhaseFinish, Start: finBegin.Sub(start), Wall: finWall},
	}
	wall := time.Since(start)
	busy := timing.Total
	b.log.Debug("proved", "key", req.KeyID, "constraints", h.NbConstraints, "wall", wall.String(), "device", devWall.String(), "busy", busy.String(), "pinned", pinned)
	return sdk.ProveResult{Proof: buf.Bytes(), Wall: wall, DeviceBusy: busy, Phases: phases}, nil
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
