package gpu

import (
	"fmt"
	"time"
)

// Groth16Timing is the device-busy time of one proof's phases, from CUDA events
// on its stream.
//
// The G2 MSM runs on a second stream beside H and the G1 MSMs, from MSMG2Start;
// Total is the span from the first event to the last on either stream, the
// device-busy time of the proof.
type Groth16Timing struct {
	Upload     time.Duration // W, A, B to the device (compact: the bitmaps and values)
	Evaluate   time.Duration // compact only: W expanded, A, B, C evaluated and checked
	NTT        time.Duration // H, after the upload
	MSMG1      time.Duration // the four G1 MSMs, after H
	MSMG2Start time.Duration // when the G2 MSM started, from the first event
	MSMG2      time.Duration // the G2 MSM
	Total      time.Duration // first event to last
}

// UnsatisfiedError is ProveCompact's error when the device found a
// constraint the witness does not satisfy (A_i·B_i != C_i): the partition is
// wrong, not the device, and proving it again gives the same answer.
type UnsatisfiedError struct {
	// Constraint is the first unsatisfied constraint, as
	// constraints.Eval reports it.
	Constraint int
	msg        string
}

func (e *UnsatisfiedError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return fmt.Sprintf("gpu: constraint %d not satisfied", e.Constraint)
}

// Unwrap returns ErrUnsatisfied.
func (e *UnsatisfiedError) Unwrap() error { return ErrUnsatisfied }

// KeyInfo describes a proving key loaded on a GPU (LoadGroth16Key).
type KeyInfo struct {
	// DeviceBytes is the device memory the key holds: its point sets, or,
	// streamed, its chunk buffers and the wire index of its A and B points.
	DeviceBytes uint64
	// Chunk is the points per chunk of a streamed key (0: resident). A
	// streamed key's points stay in host memory, pinned, and every proof
	// copies them to the device chunk by chunk, each copy overlapping the MSM
	// of the chunk before.
	Chunk uint64
	// Partials is how many sums a proof returns for A, B, K, Z (G1) and B
	// (G2): one each resident, one per chunk streamed.
	Partials [5]int
	// WorkG1 and WorkG2 are the MSM working memory one proof takes on its G1
	// and its G2 stream, as msm.cu sizes it on this device.
	WorkG1, WorkG2 uint64
	// PinnedCopyBytes is the host memory a streamed key pinned in copies of
	// its points: 0 when the device reads them in place (registered).
	PinnedCopyBytes uint64
	// Registered is how many host ranges a streamed key registered in place.
	Registered int
	// Copies is the precomputed copies a resident key keeps of A, B, K, Z
	// (G1) and B (G2), as KeyCopiesOf plans them (D 1: none).
	Copies [5]SetCopies
	// Constraints is the rows of the constraint system the key holds
	// (SetConstraints; 0: none), and ConstraintBytes the device memory it
	// takes, part of DeviceBytes.
	Constraints     int
	ConstraintBytes uint64
	// HBlock is a streamed key's block of H out of core when its proofs
	// stream too (LoadGroth16KeyPlan of a lean plan): a slot then holds
	// nothing of a partition on the device. 0: they do not.
	HBlock uint64
	// StreamC is the window cap of such proofs' MSMs (0: none).
	StreamC int
}

// ProveOptions is how a Groth16 key's proofs run on the device. Neither
// changes a proof's result, only how it is computed: for with/without
// comparisons. The zero value is the default.
type ProveOptions struct {
	// DenseMSM runs a resident key's MSMs over W dense, without the
	// witness-aware split (ClassifyScalars, MSMSplit) that keeps W's 0s and
	// 1s out of Pippenger.
	DenseMSM bool
	// NTTRadix is the radix of H's NTTs (NTTRadixDefault: radix 4).
	NTTRadix NTTRadix
	// LeanSplit runs a lean key's MSMs over W (A, B and K) with each
	// chunk's scalars classified on the host as they are gathered
	// (zk_msm_run_stream_split): its 0s copy and add nothing and its 1s are
	// summed apart, the streamed counterpart of the witness-aware split.
	// Off by default until a device measures it against the dense runs.
	LeanSplit bool
}

// check returns an error wrapping ErrInvalid naming the option out of range.
func (o ProveOptions) check(op string) error { return o.NTTRadix.check(op) }
