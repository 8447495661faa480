package refprover

import (
	"context"
	"fmt"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// MSMChunk is the largest number of points one gnark-crypto MultiExp call gets. A longer
// multi-scalar multiplication is cut into nearly equal chunks whose results are added,
// and the context is checked between chunks, so cancellation waits for one chunk at
// most. At 2^22 points gnark-crypto already uses its widest window (c = 16), so
// chunking adds only the per-chunk bucket reduction: about 2·2^15 point additions
// per window against the chunk's 2^22 (under 2%; counted, not timed).
const MSMChunk = 1 << 22

// MSMResults holds the raw multi-scalar multiplications of a proof, before the
// randomization that Assemble adds. All points are Jacobian, G1J and G2J of the
// proof's curve.
type MSMResults[G1J, G2J any] struct {
	Ar   G1J // Σ wᵢ·G1A over wires where InfinityA is false
	Bs1  G1J // Σ wᵢ·G1B over wires where InfinityB is false
	Krs  G1J // Σ wᵢ·G1K over the private wires W[NbPublic:]
	Krs2 G1J // Σ hᵢ·G1Z over h[:N-1] (h[:N] for a key in snarkjs's H form)
	Bs2  G2J // Σ wᵢ·G2B over wires where InfinityB is false
}

// WireScalars are the wire vector W cut into the scalar vectors of each MSM.
type WireScalars[S any] struct {
	A []S // W without the wires whose InfinityA is true (a copy)
	B []S // W without the wires whose InfinityB is true (a copy)
	K []S // W[NbPublic:] (aliases W)
}

// FilterWires checks W and the key against each other and returns the scalar vectors
// of the MSMs. The A and B vectors are copies, as gnark makes them, because the key
// has no points for wires whose A or B polynomial is zero. Cost: one pass over W;
// memory: up to 2·NbWires elements (64 bytes per wire).
func FilterWires[S, G1, G2 any](pk *keyfile.ProvingKey[G1, G2], w []S) (WireScalars[S], error) {
	if err := checkKey(pk); err != nil {
		return WireScalars[S]{}, err
	}
	if uint64(len(w)) != pk.NbWires {
		return WireScalars[S]{}, sdk.Errorf(sdk.ErrInvalidArgument, "refprover: W has %d wires, the key has %d", len(w), pk.NbWires)
	}
	return WireScalars[S]{
		A: filter(w, pk.InfinityA, len(pk.G1A)),
		B: filter(w, pk.InfinityB, len(pk.G1B)),
		K: w[pk.NbPublic:],
	}, nil
}

// filter copies the wires whose mask entry is false; count is how many there are.
func filter[S any](w []S, infinity []bool, count int) []S {
	out := make([]S, 0, count)
	for i, inf := range infinity {
		if !inf {
			out = append(out, w[i])
		}
	}
	return out
}

// checkKey checks the lengths the MSMs rely on, so a malformed key is an error rather
// than a panic inside gnark-crypto.
func checkKey[G1, G2 any](pk *keyfile.ProvingKey[G1, G2]) error {
	if pk == nil {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: nil proving key")
	}
	if uint64(len(pk.InfinityA)) != pk.NbWires || uint64(len(pk.InfinityB)) != pk.NbWires {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: key infinity masks have %d and %d entries, want %d (one per wire)",
			len(pk.InfinityA), len(pk.InfinityB), pk.NbWires)
	}
	if pk.NbPublic == 0 || pk.NbPublic > pk.NbWires || uint64(len(pk.G1K)) != pk.NbWires-pk.NbPublic {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: key has %d K points for %d wires of which %d public",
			len(pk.G1K), pk.NbWires, pk.NbPublic)
	}
	if want := countFalse(pk.InfinityA); len(pk.G1A) != want {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: key has %d G1 A points, want %d (wires whose InfinityA is false)", len(pk.G1A), want)
	}
	if want := countFalse(pk.InfinityB); len(pk.G1B) != want || len(pk.G2B) != want {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: key has %d G1 B and %d G2 B points, want %d (wires whose InfinityB is false)",
			len(pk.G1B), len(pk.G2B), want)
	}
	if pk.DomainSize == 0 || uint64(len(pk.G1Z)) < pk.HForm.NbZ(pk.DomainSize) {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: key has %d Z points, want at least %d (for a domain of %d in %s form)",
			len(pk.G1Z), pk.HForm.NbZ(pk.DomainSize), pk.DomainSize, pk.HForm)
	}
	return nil
}

func countFalse(b []bool) int {
	n := 0
	for _, v := range b {
		if !v {
			n++
		}
	}
	return n
}

// ComputeG1 computes the four G1 MSMs into res (Ar, Bs1, Krs, Krs2), concurrently as
// gnark does, each with threads/2 tasks (at least 1; threads 0 means all cores).
// h is ComputeH's result (len ≥ N−1), or ComputeHSnarkjs's for a key in snarkjs's
// H form (len N). Cost: about NbWires·(nonzero share of A, B, K)
// + N point additions per window; memory: gnark-crypto's digit tables, about 32 bytes
// per scalar of each concurrent MSM, plus bucket tables that grow with the window
// (2^15 buckets of a Jacobian point per window at c = 16, reached near 2^20 points).
// The context is checked between MSMChunk chunks.
func ComputeG1[S, G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2], ws WireScalars[S], h []S, threads int, res *MSMResults[G1J, G2J]) error {
	if pk == nil || pk.DomainSize == 0 || uint64(len(pk.G1Z)) < pk.HForm.NbZ(pk.DomainSize) {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: the key has no domain or fewer Z points than its H form needs")
	}
	if uint64(len(h)) < pk.HForm.NbZ(pk.DomainSize) {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: H has %d scalars, want at least %d", len(h), pk.HForm.NbZ(pk.DomainSize))
	}
	if len(ws.A) != len(pk.G1A) || len(ws.B) != len(pk.G1B) || len(ws.K) != len(pk.G1K) {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: wire scalars (%d, %d, %d) do not match the key's A, B, K points (%d, %d, %d)",
			len(ws.A), len(ws.B), len(ws.K), len(pk.G1A), len(pk.G1B), len(pk.G1K))
	}
	return computeG1(ctx, c, pk, ws, h, threads, res, defaultG1Schedule)
}

// g1Schedule says how the four G1 MSMs share the cores.
type g1Schedule int

const (
	g1Concurrent g1Schedule = iota // all four at once, threads/2 tasks each, as gnark
	g1Sequential                   // one after another, all threads each
)

// defaultG1Schedule is what ComputeG1 uses: all at once was the faster schedule
// in BenchmarkMSMSchedule (BENCHMARKS.md).
const defaultG1Schedule = g1Concurrent

func computeG1[S, G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2], ws WireScalars[S], h []S, threads int, res *MSMResults[G1J, G2J], schedule g1Schedule) error {
	// In gnark's form deg H ≤ N−2: its last coefficient is zero and has no point.
	sizeH := int(pk.HForm.NbZ(pk.DomainSize))
	jobs := []struct {
		name    string
		out     *G1J
		points  []G1
		scalars []S
	}{
		{"A", &res.Ar, pk.G1A, ws.A},
		{"B", &res.Bs1, pk.G1B, ws.B},
		{"K", &res.Krs, pk.G1K, ws.K},
		{"Z", &res.Krs2, pk.G1Z[:sizeH], h[:sizeH]},
	}
	if schedule == g1Sequential {
		tasks := threadCount(threads)
		for _, j := range jobs {
			var err error
			if *j.out, err = MultiExpG1(ctx, c, j.points, j.scalars, tasks, MSMChunk); err != nil {
				return fmt.Errorf("refprover: G1 MSM %s: %w", j.name, err)
			}
		}
		return nil
	}
	tasks := max(threadCount(threads)/2, 1)
	errs := make(chan error, len(jobs))
	for _, j := range jobs {
		go func() {
			var err error
			*j.out, err = MultiExpG1(ctx, c, j.points, j.scalars, tasks, MSMChunk)
			if err != nil {
				err = fmt.Errorf("refprover: G1 MSM %s: %w", j.name, err)
			}
			errs <- err
		}()
	}
	var first error
	for range jobs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ComputeG2 computes the G2 MSM into res.Bs2 with g2Tasks(threads) tasks (threads 0
// means all cores). Cost: about len(B) G2 point additions per window (a G2 addition
// costs about 3 G1 additions). The context is checked between MSMChunk chunks.
func ComputeG2[S, G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2], ws WireScalars[S], threads int, res *MSMResults[G1J, G2J]) error {
	if pk == nil || len(ws.B) != len(pk.G2B) {
		if pk == nil {
			return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: nil proving key")
		}
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: %d B scalars for %d G2 B points", len(ws.B), len(pk.G2B))
	}
	var err error
	res.Bs2, err = MultiExpG2(ctx, c, pk.G2B, ws.B, g2Tasks(threads), MSMChunk)
	if err != nil {
		return fmt.Errorf("refprover: G2 MSM B: %w", err)
	}
	return nil
}

// g2Tasks is the task count of the G2 MSM for threads goroutines per proof: twice
// the threads up to 16, as gnark v0.14.0's groth16.Prove sets it (computeBS2).
// gnark-crypto uses the count to cut the MSM's digit pass into goroutines and to
// weigh splitting the MSM in halves, so the same count gives the same schedule as
// gnark's prover, which make bench-cpu measures against.
func g2Tasks(threads int) int {
	n := threadCount(threads)
	if n <= 16 {
		return 2 * n
	}
	return n
}

// ComputeMSMs computes every MSM of a proof: FilterWires, then ComputeG1, then
// ComputeG2.
func ComputeMSMs[S, G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2], w, h []S, threads int) (MSMResults[G1J, G2J], error) {
	var res MSMResults[G1J, G2J]
	ws, err := FilterWires(pk, w)
	if err != nil {
		return res, err
	}
	if err := ComputeG1(ctx, c, pk, ws, h, threads, &res); err != nil {
		return res, err
	}
	if err := ComputeG2(ctx, c, pk, ws, threads, &res); err != nil {
		return res, err
	}
	return res, nil
}

// MultiExpG1 returns Σ scalars[i]·points[i] with gnark-crypto's MultiExp, cut into
// chunks of at most chunk points with the context checked between them. The sum of
// nothing is the point at infinity.
func MultiExpG1[S, G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], points []G1, scalars []S, tasks, chunk int) (G1J, error) {
	return multiExp(ctx, points, scalars, tasks, chunk, c.G1Infinity(), c.G1MultiExp, c.G1Add)
}

// MultiExpG2 is MultiExpG1 in G2.
func MultiExpG2[S, G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], points []G2, scalars []S, tasks, chunk int) (G2J, error) {
	return multiExp(ctx, points, scalars, tasks, chunk, c.G2Infinity(), c.G2MultiExp, c.G2Add)
}

// multiExp is MultiExpG1 and MultiExpG2 in a group with affine points A and Jacobian
// sums J: zero is the group's infinity, msm a MultiExp and add adds a sum into acc.
func multiExp[S, A, J any](ctx context.Context, points []A, scalars []S, tasks, chunk int, zero J,
	msm func([]A, []S, int) (J, error), add func(acc, p *J)) (J, error) {
	acc := zero
	if len(points) != len(scalars) {
		return acc, sdk.Errorf(sdk.ErrInvalidArgument, "refprover: %d points for %d scalars", len(points), len(scalars))
	}
	for _, r := range chunks(len(points), chunk) {
		if err := ctx.Err(); err != nil {
			return acc, err
		}
		part, err := msm(points[r[0]:r[1]], scalars[r[0]:r[1]], tasks)
		if err != nil {
			return acc, err
		}
		add(&acc, &part)
	}
	return acc, nil
}

// chunks cuts [0, n) into the fewest nearly equal ranges of at most size elements.
func chunks(n, size int) [][2]int {
	if n == 0 {
		return nil
	}
	size = max(size, 1)
	count := (n + size - 1) / size
	step := (n + count - 1) / count
	out := make([][2]int, 0, count)
	for start := 0; start < n; start += step {
		out = append(out, [2]int{start, min(start+step, n)})
	}
	return out
}
