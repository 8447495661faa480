package sdk

import (
	"context"
	"time"
)

// APIVersion is the version of the backend contract this SDK implements. The host
// and a backend intersect their supported versions during Describe. Version 2:
// partitions are sealed memfds (PartitionHandle), no longer files with a digest.
const APIVersion uint32 = 2

// Curve names an elliptic curve a backend can prove on.
type Curve string

// Curves known to the contract: BLS12-381 and BN254. The contract carries the curve
// everywhere (a backend's Description, every partition handle).
const (
	CurveBLS12381 Curve = "bls12-381"
	CurveBN254    Curve = "bn254"
)

// DeviceInfo describes the device a backend owns.
type DeviceInfo struct {
	// Kind is the device class: "cpu", "cuda", or a vendor's own word.
	Kind string
	// Model is the device's marketing name, e.g. "NVIDIA H200".
	Model string
	// Index is the device's index among devices of its kind on this machine.
	Index int
	// Available is false when the backend runs but has no usable device (no GPU,
	// driver too old); Reason then says why and Prove is refused.
	Available bool
	Reason    string
	// MemoryTotal and MemoryFree are the device's memory in bytes (for the CPU
	// backend: the machine's RAM).
	MemoryTotal uint64
	MemoryFree  uint64
}

// Description is a backend's answer to Describe.
type Description struct {
	Name        string
	Version     string
	APIVersions []uint32
	Device      DeviceInfo
	Curves      []Curve
	// MaxInFlight is how many partitions the backend can usefully hold at once:
	// the host keeps that many outstanding so the next one is staged while the
	// current one computes.
	MaxInFlight int
	// HostBytesPerConstraint and DeviceBytesPerConstraint are the memory one
	// in-flight partition needs, per constraint, beyond the shared-memory file
	// the host already counts. The host's budget reserves what these say.
	HostBytesPerConstraint   uint64
	DeviceBytesPerConstraint uint64
	// CompactW says the backend evaluates A and B itself from a circuit's
	// constraints (KeyRef.Constraints) and proves partitions that carry W
	// alone, packed (FormatCompactW). The host then sends it the constraints
	// with every key and compact partitions for the keys it accepted them
	// for (KeyInfo.CompactW).
	CompactW bool
}

// KeyRef names a proving key file for LoadKey.
type KeyRef struct {
	// ID is the host's name for the key; Prove refers to it.
	ID string
	// Path is the key file in zkhost's format (package sdk/keyfile).
	Path string
	// Digest is the SHA-256 of the key file's header block, which itself holds a
	// SHA-256 of every section: one digest pins the whole file.
	Digest [32]byte
	// Constraints, when set, is the circuit's constraint matrices, for a
	// backend that proves compact partitions (Description.CompactW). A backend
	// that does not ignores it. Their coefficients, like a compact partition's
	// values, are scalars of the key's curve, BN254 as well as BLS12-381: a
	// backend that cannot evaluate a curve's constraints loads that curve's
	// keys without them (KeyInfo.CompactW false), and the host then sends
	// that circuit full partitions.
	Constraints *ConstraintsHandle
}

// KeyInfo is what LoadKey answers: the bytes the key keeps resident.
type KeyInfo struct {
	HostBytes   uint64
	DeviceBytes uint64
	// CompactW says Prove takes compact partitions (FormatCompactW) for this
	// key: the backend holds the constraints KeyRef.Constraints gave (counted
	// in the bytes above). False when none were given or the backend could
	// not keep them (say, a key streamed to a device too small for them);
	// the host then sends full partitions.
	CompactW bool
}

// PartitionHandle locates one synthesized partition in a sealed shared-memory
// file. All vectors are arrays of field elements of the curve's scalar field, 32
// bytes each, Montgomery form, little-endian limbs (gnark-crypto's in-memory
// layout).
//
// The host writes the partition into a memfd and seals it (F_SEAL_WRITE,
// F_SEAL_SHRINK, F_SEAL_GROW) before sending the handle: from then on the kernel
// refuses every change to its bytes, by anyone, so a backend that checks the
// seals (OpenPartition does) proves exactly the bytes the host wrote without
// hashing them.
type PartitionHandle struct {
	// Path opens the file read-only: /proc/<host pid>/fd/<n>, the host's
	// descriptor of the memfd (the backend is the host's child, same user).
	Path string
	// Inode is the file's inode number (st_ino). OpenPartition checks that the
	// file it opened has it, so a descriptor number that the host has closed and
	// reused for another partition is refused instead of proven.
	Inode uint64
	// Size is the file's size in bytes.
	Size  int64
	Curve Curve
	// NbWires is len(W); NbConstraints is len(A) == len(B).
	NbWires       uint64
	NbConstraints uint64
	// WOffset, AOffset and BOffset are the byte offsets of W, A and B
	// (FormatFull; zero otherwise).
	WOffset uint64
	AOffset uint64
	BOffset uint64
	// Format says what the file holds: FormatFull (W, A, B) unless the
	// backend asked for compact partitions (Description.CompactW) and loaded
	// the key with its constraints (KeyInfo.CompactW).
	Format PartitionFormat
	// NbOther, OtherOffset, BitsOffset and ValuesOffset describe a
	// FormatCompactW file (CompactLayout): how many wires are neither 0 nor
	// 1, and where the Other and Bits bitmaps and those wires' values are.
	NbOther      uint64
	OtherOffset  uint64
	BitsOffset   uint64
	ValuesOffset uint64
}

// ProveRequest asks a backend for one Groth16 proof.
type ProveRequest struct {
	KeyID     string
	Partition PartitionHandle
}

// Phase is one timed step inside Prove. Start is relative to the moment the
// backend received the request, so the host can place it on its own clock.
// DeviceBusy is the time the device was actually busy in the phase (CUDA events
// on a GPU; thread-seconds divided by threads on the CPU), never the wall time
// of a call unless the two are the same.
type Phase struct {
	Name       string
	Start      time.Duration
	Wall       time.Duration
	DeviceBusy time.Duration
}

// Phase names the built-in backends use. Others may add their own.
const (
	PhaseMap    = "map"    // open, check and map the partition
	PhaseUpload = "upload" // host to device copies
	PhaseEval   = "eval"   // a compact W expanded, A, B and C evaluated and checked
	PhaseNTT    = "ntt"    // H = (A·B − C)/Z
	PhaseMSMG1  = "msm_g1" // G1 multi-scalar multiplications
	PhaseMSMG2  = "msm_g2" // G2 multi-scalar multiplication
	PhaseFinish = "finish" // assembly of the proof with fresh r and s
)

// ProveResult is a backend's answer to Prove.
type ProveResult struct {
	// Proof is gnark's encoding of the proof (groth16.Proof.WriteTo).
	Proof []byte
	// Wall is the time from receiving the request to answering it.
	Wall time.Duration
	// DeviceBusy is the total time the device was busy for this proof.
	DeviceBusy time.Duration
	Phases     []Phase
}

// Backend is what a backend implements. Every method may be called concurrently;
// Prove is called up to Description.MaxInFlight times at once. A Prove whose
// context is cancelled must stop its work and return an error of kind
// ErrCanceled promptly.
type Backend interface {
	Describe(ctx context.Context) (Description, error)
	// LoadKey maps or uploads a key. It is idempotent: loading a loaded key with
	// the same digest answers the same KeyInfo; the same ID with another digest
	// is an ErrInvalidArgument.
	LoadKey(ctx context.Context, key KeyRef) (KeyInfo, error)
	// UnloadKey releases a key. Unloading an unknown key is not an error.
	UnloadKey(ctx context.Context, keyID string) error
	Prove(ctx context.Context, req ProveRequest) (ProveResult, error)
}
