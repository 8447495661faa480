package refprover

import (
	"context"
	"fmt"
	"time"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// Span is one timed phase: Start is relative to the start of Prove, Wall is its
// duration.
type Span struct {
	Start time.Duration
	Wall  time.Duration
}

// Timings are the phases of one Prove call. MSMG1 and MSMG2 start together and
// overlap; the others run one after another.
type Timings struct {
	NTT    Span // ComputeH
	MSMG1  Span // FilterWires and ComputeG1
	MSMG2  Span // ComputeG2
	Finish Span // RandomRS and Assemble
}

// Phases returns the timings as sdk phases (sdk.PhaseNTT, sdk.PhaseMSMG1,
// sdk.PhaseMSMG2, sdk.PhaseFinish), their starts shifted by offset (the time between
// the backend receiving the request and calling Prove). On the CPU a phase keeps all
// its threads busy, so a phase's DeviceBusy is its wall time, except that the
// overlapping MSM phases count each moment once: the G2 phase is busy only past the
// end of the G1 phase. Phases that did not run (Prove failed before them) are left out.
func (t Timings) Phases(offset time.Duration) []sdk.Phase {
	all := []struct {
		name string
		span Span
	}{
		{sdk.PhaseNTT, t.NTT},
		{sdk.PhaseMSMG1, t.MSMG1},
		{sdk.PhaseMSMG2, t.MSMG2},
		{sdk.PhaseFinish, t.Finish},
	}
	var out []sdk.Phase
	for _, p := range all {
		if p.span == (Span{}) {
			continue
		}
		busy := p.span.Wall
		if p.name == sdk.PhaseMSMG2 {
			busy = t.msmG2Only()
		}
		out = append(out, sdk.Phase{Name: p.name, Start: offset + p.span.Start, Wall: p.span.Wall, DeviceBusy: busy})
	}
	return out
}

// Busy returns the time the CPU worked on the proof: the phases' wall times, with
// the overlapping MSM phases counted once.
func (t Timings) Busy() time.Duration {
	return t.NTT.Wall + t.MSMG1.Wall + t.msmG2Only() + t.Finish.Wall
}

// msmG2Only is the part of the G2 MSM phase after the G1 MSM phase ended.
func (t Timings) msmG2Only() time.Duration {
	return max(0, t.MSMG2.Start+t.MSMG2.Wall-(t.MSMG1.Start+t.MSMG1.Wall))
}

// afterPhase, when set (by tests), is called after each phase with its name.
var afterPhase func(name string)

// Prove computes a Groth16 proof of a solved R1CS on the curve c binds (curve.BLS12381{}
// or curve.BN254{}, whose types pk and the vectors must have): w is the wire vector (len NbWires),
// a and b the evaluations of the A and B polynomials at each constraint (len ≤
// DomainSize). Inputs are only read; they may alias read-only mappings.
//
// Phases run on threads goroutines each (0 means all cores): ComputeH (ComputeHSnarkjs
// for a key in snarkjs's H form), then the G1
// MSMs and the G2 MSM side by side (as gnark does; faster than in turn, see
// BenchmarkMSMSchedule in BENCHMARKS.md), then Assemble with fresh RandomRS.
// The context is checked between phases and inside them (between FFTs and MSM
// chunks); a cancelled context returns an error wrapping ctx.Err().
//
// Memory beyond the inputs, per constraint when NbWires ≈ N: 64 bytes during
// ComputeH (two vectors of N), then H (32), the filtered wire copies (64) and
// gnark-crypto's digit tables (about 32 per scalar of each MSM) during the MSMs, plus
// MSM bucket tables that stop growing near 2^20 points. BenchmarkProveMemory
// measures the peak against gnark's groth16.Prove (figures in BENCHMARKS.md).
//
// Speed against gnark's groth16.Prove: `make bench-cpu`, figures in BENCHMARKS.md.
func Prove[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2], w, a, b []S, threads int) (*sdk.Proof[G1, G2], Timings, error) {
	start := time.Now()
	var t Timings
	if err := checkKey(pk); err != nil {
		return nil, t, err
	}
	if uint64(len(w)) != pk.NbWires {
		return nil, t, sdk.Errorf(sdk.ErrInvalidArgument, "refprover: W has %d wires, the key has %d", len(w), pk.NbWires)
	}
	if len(a) != len(b) || uint64(len(a)) > pk.DomainSize {
		return nil, t, sdk.Errorf(sdk.ErrInvalidArgument, "refprover: A and B have %d and %d constraints, want equal lengths ≤ the domain size %d",
			len(a), len(b), pk.DomainSize)
	}

	// phase runs one phase, records its span and checks the context after it.
	phase := func(name string, span *Span, run func() error) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("refprover: before %s: %w", name, err)
		}
		begin := time.Now()
		err := run()
		*span = Span{Start: begin.Sub(start), Wall: time.Since(begin)}
		if err != nil {
			return err
		}
		if afterPhase != nil {
			afterPhase(name)
		}
		return nil
	}

	var h []S
	if err := phase(sdk.PhaseNTT, &t.NTT, func() (err error) {
		if pk.HForm == keyfile.HFormSnarkjs {
			h, err = ComputeHSnarkjs[S, PS](ctx, c, a, b, pk.DomainSize, threads)
		} else {
			h, err = ComputeH[S, PS](ctx, c, a, b, pk.DomainSize, threads)
		}
		return err
	}); err != nil {
		return nil, t, err
	}

	// The G2 MSM runs beside the G1 MSMs, as in gnark: on a shared CPU the
	// total work is the same, but one MSM's serial tail (bucket reduction) overlaps
	// the other's parallel work (BenchmarkMSMSchedule, BENCHMARKS.md).
	var res MSMResults[G1J, G2J]
	if err := ctx.Err(); err != nil {
		return nil, t, fmt.Errorf("refprover: before %s: %w", sdk.PhaseMSMG1, err)
	}
	ws, err := FilterWires(pk, w)
	if err != nil {
		return nil, t, err
	}
	msmBegin := time.Now()
	g2Done := make(chan error, 1)
	go func() {
		err := ComputeG2(ctx, c, pk, ws, threads, &res)
		t.MSMG2 = Span{Start: msmBegin.Sub(start), Wall: time.Since(msmBegin)}
		g2Done <- err
	}()
	g1Err := ComputeG1(ctx, c, pk, ws, h, threads, &res)
	t.MSMG1 = Span{Start: msmBegin.Sub(start), Wall: time.Since(msmBegin)}
	h = nil
	g2Err := <-g2Done
	for _, e := range []error{g1Err, g2Err} {
		if e != nil {
			return nil, t, e
		}
	}
	if afterPhase != nil {
		afterPhase(sdk.PhaseMSMG1)
		afterPhase(sdk.PhaseMSMG2)
	}
	if err := ctx.Err(); err != nil {
		return nil, t, fmt.Errorf("refprover: after the MSMs: %w", err)
	}

	var proof *sdk.Proof[G1, G2]
	if err := phase(sdk.PhaseFinish, &t.Finish, func() error {
		r, s, err := RandomRS[S, PS]()
		if err != nil {
			return fmt.Errorf("refprover: drawing r and s: %w", err)
		}
		proof = Assemble[S, PS](c, pk, res, r, s)
		return nil
	}); err != nil {
		return nil, t, err
	}
	return proof, t, nil
}
