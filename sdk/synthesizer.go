package sdk

import (
	"context"
	"time"
)

// SynthAPIVersion is the version of the synthesizer contract this SDK
// implements. The host reads a synthesizer's versions from Describe and refuses
// one that does not speak it.
const SynthAPIVersion uint32 = 1

// SynthDescription is a synthesizer's answer to Describe.
type SynthDescription struct {
	Name        string
	Version     string
	APIVersions []uint32
	Curves      []Curve
	// MaxInFlight is how many Synthesize calls the synthesizer serves at once;
	// the host never sends more.
	MaxInFlight int
}

// CircuitRef names the circuit a synthesizer solves, with the sizes the solved
// partitions must have.
type CircuitRef struct {
	// ID is the host's name for the circuit (its key set's name); Synthesize
	// refers to it.
	ID string
	// Curve is the circuit's curve: every element of its partitions is a
	// scalar of that curve's field (the fr.Element WritePartition takes), and
	// each SynthesizeRequest's Output names the same curve.
	Curve Curve
	// CCSPath is the circuit's constraint system as gnark writes it
	// (R1CS.WriteTo), and CCSSHA256 the SHA-256 of that file. A synthesizer of
	// another stack (bellperson, a circom witness calculator) may ignore it,
	// but must then check the sizes below against its own circuit.
	CCSPath   string
	CCSSHA256 [32]byte
	// NbWires is len(W); NbConstraints is len(A) == len(B). NbPublic counts the
	// public wires including the constant-1 wire W[0]; NbSecret the secret inputs.
	NbWires       uint64
	NbConstraints uint64
	NbPublic      uint64
	NbSecret      uint64
}

// SynthesizeRequest asks a synthesizer for one solved partition.
type SynthesizeRequest struct {
	CircuitID string
	// Witness is the partition's inputs as the client submitted them: for gnark
	// circuits the full witness, witness.MarshalBinary.
	Witness []byte
	// Output is where and how to write the partition: Path names a memfd the
	// host made (/proc/<host pid>/fd/<n>, with Inode), already of Size bytes,
	// all zero, sealed against growing and shrinking; the counts and offsets
	// are the layout PartitionLayout gives. Open it for writing (no create),
	// write the sections, and hold no writable mapping of it when answering:
	// the host then seals it against writes, which the kernel refuses while
	// such a mapping exists. WritePartition does exactly this.
	Output PartitionHandle
}

// SynthesizeResult is a synthesizer's answer to Synthesize.
type SynthesizeResult struct {
	// Wall is the time from receiving the request to answering it; Serve fills
	// it in when the synthesizer leaves it zero.
	Wall time.Duration
}

// Synthesizer is what a synthesizer plugin implements: the second plugin kind
// beside Backend. A backend owns a device; a synthesizer owns a circuit's
// synthesis, linking the circuit's solver and hints (or another stack's) that
// the host does not have. Every method may be called concurrently; Synthesize
// up to SynthDescription.MaxInFlight times at once.
//
// Errors are *Error: ErrInvalidArgument for inputs that can never succeed (a
// witness that does not parse, has the wrong size, or does not satisfy the
// circuit; an output the synthesizer cannot write), ErrKeyNotLoaded for a
// circuit ID not loaded, ErrResourceExhausted when there is no room now. The
// host fails the job on a non-retryable error and retries a retryable one.
type Synthesizer interface {
	Describe(ctx context.Context) (SynthDescription, error)
	// LoadCircuit prepares circuit ref (parses its constraint system, say) and
	// checks that the synthesizer can solve it with these sizes. It is
	// idempotent: loading a loaded ID with the same digest succeeds again; the
	// same ID with another digest is an ErrInvalidArgument.
	LoadCircuit(ctx context.Context, ref CircuitRef) error
	// Synthesize solves one partition of a loaded circuit and writes W, A and B
	// to req.Output. A cancelled ctx should stop the work; a synthesizer that
	// cannot stop its solver returns when it finishes, and the host has then
	// given up on the call already.
	Synthesize(ctx context.Context, req SynthesizeRequest) (SynthesizeResult, error)
}
