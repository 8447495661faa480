package refprover

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/refprover/gnarkref"
)

func TestComputeHMatchesGnark(t *testing.T) {
	tests := []struct {
		name    string
		steps   int
		threads int
	}{
		{"padded domain, all cores", 700, 0},
		{"padded domain, one thread", 700, 1},
		{"full domain, three threads", 1023, 3}, // 1023 steps + 1 assertion = 1024 constraints
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := chainFixture(t, tt.steps)
			sol := f.solution
			if uint64(len(sol.A)) == f.pk.DomainSize && tt.steps != 1023 {
				t.Fatalf("fixture should need padding: %d constraints, domain %d", len(sol.A), f.pk.DomainSize)
			}
			want := gnarkref.ComputeH(sol.A, sol.B, sol.C, fft.NewDomain(f.pk.DomainSize))
			aBefore := append([]fr.Element(nil), sol.A...)
			got, err := ComputeH(context.Background(), bls, sol.A, sol.B, f.pk.DomainSize, tt.threads)
			if err != nil {
				t.Fatalf("ComputeH: %v", err)
			}
			if len(got) != len(want) {
				t.Fatalf("len(H) = %d, want %d", len(got), len(want))
			}
			for i := range want {
				if !got[i].Equal(&want[i]) {
					t.Fatalf("H[%d] = %s, gnark's computeH gives %s", i, got[i].String(), want[i].String())
				}
			}
			// deg H ≤ N−2: the coefficient gnark drops (last, bit-reversed) is zero.
			if !got[len(got)-1].IsZero() {
				t.Errorf("H[N-1] = %s, want 0 for a satisfied R1CS", got[len(got)-1].String())
			}
			for i := range aBefore {
				if !aBefore[i].Equal(&sol.A[i]) {
					t.Fatalf("ComputeH wrote to its input A at %d", i)
				}
			}
		})
	}
}

func TestComputeHUnsatisfiedDiffers(t *testing.T) {
	// C is derived from A∘B, so a tampered A must change H: the comparison above is
	// not vacuous.
	f := chainFixture(t, 700)
	a := append([]fr.Element(nil), f.solution.A...)
	a[10].SetUint64(12345)
	got, err := ComputeH(context.Background(), bls, a, f.solution.B, f.pk.DomainSize, 0)
	if err != nil {
		t.Fatalf("ComputeH: %v", err)
	}
	want := gnarkref.ComputeH(f.solution.A, f.solution.B, f.solution.C, fft.NewDomain(f.pk.DomainSize))
	same := true
	for i := range want {
		if !got[i].Equal(&want[i]) {
			same = false
			break
		}
	}
	if same {
		t.Fatal("H did not change when A changed")
	}
}

func TestComputeHErrors(t *testing.T) {
	three := make([]fr.Element, 3)
	two := make([]fr.Element, 2)
	tests := []struct {
		name   string
		a, b   []fr.Element
		domain uint64
	}{
		{"length mismatch", three, two, 4},
		{"empty", nil, nil, 4},
		{"too many constraints", three, three, 2},
		{"domain not a power of two", three, three, 6},
		{"domain too large", three, three, 1 << 33},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ComputeH(context.Background(), bls, tt.a, tt.b, tt.domain, 1)
			if err == nil {
				t.Fatal("ComputeH accepted bad input")
			}
			if k := sdk.KindOf(err); k != sdk.ErrInvalidArgument {
				t.Errorf("kind = %v, want invalid_argument (%v)", k, err)
			}
		})
	}
}

func TestDomainCache(t *testing.T) {
	d1, err := Domain(bls, 512)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := Domain(bls, 512)
	if err != nil {
		t.Fatal(err)
	}
	if d1 != d2 {
		t.Error("Domain(512) built twice while held")
	}
	if d1.Size() != 512 {
		t.Errorf("cardinality %d, want 512", d1.Size())
	}
	for _, n := range []uint64{0, 3, 1 << 33} {
		if _, err := Domain(bls, n); err == nil {
			t.Errorf("Domain(%d) accepted", n)
		}
	}
}

func TestMultiExpChunks(t *testing.T) {
	f := chainFixture(t, 700)
	points := f.pk.G1A
	points2 := f.pk.G2B
	scalars := make([]fr.Element, max(len(points), len(points2)))
	for i := range scalars {
		scalars[i].SetRandom()
	}
	var want bls12381.G1Jac
	if _, err := want.MultiExp(points, scalars[:len(points)], ecc.MultiExpConfig{}); err != nil {
		t.Fatal(err)
	}
	var want2 bls12381.G2Jac
	if _, err := want2.MultiExp(points2, scalars[:len(points2)], ecc.MultiExpConfig{}); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 7, 100, len(points) - 1, len(points), 1 << 22} {
		got, err := MultiExpG1(context.Background(), bls, points, scalars[:len(points)], 2, chunk)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if !got.Equal(&want) {
			t.Errorf("G1 chunk %d: sum differs from one MultiExp", chunk)
		}
		got2, err := MultiExpG2(context.Background(), bls, points2, scalars[:len(points2)], 2, chunk)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if !got2.Equal(&want2) {
			t.Errorf("G2 chunk %d: sum differs from one MultiExp", chunk)
		}
	}
	empty, err := MultiExpG1(context.Background(), bls, nil, nil, 1, 10)
	if err != nil || !empty.Z.IsZero() {
		t.Errorf("empty MSM = %v, %v; want infinity", empty, err)
	}
	if _, err := MultiExpG1(context.Background(), bls, points, scalars[:3], 1, 10); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("length mismatch: err %v, want invalid_argument", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MultiExpG1(ctx, bls, points, scalars[:len(points)], 1, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled MSM: err %v, want context.Canceled", err)
	}
}

func TestChunks(t *testing.T) {
	tests := []struct {
		n, size int
		want    [][2]int
	}{
		{0, 4, nil},
		{3, 4, [][2]int{{0, 3}}},
		{8, 4, [][2]int{{0, 4}, {4, 8}}},
		{9, 4, [][2]int{{0, 3}, {3, 6}, {6, 9}}},
		{5, 0, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}},
	}
	for _, tt := range tests {
		got := chunks(tt.n, tt.size)
		if len(got) != len(tt.want) {
			t.Errorf("chunks(%d, %d) = %v, want %v", tt.n, tt.size, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("chunks(%d, %d) = %v, want %v", tt.n, tt.size, got, tt.want)
				break
			}
		}
	}
}

func TestProveVerifies(t *testing.T) {
	f := chainFixture(t, 700)
	sol := f.solution
	for _, threads := range []int{0, 1, 3} {
		proof, timings, err := Prove(context.Background(), bls, f.pk, sol.W, sol.A, sol.B, threads)
		if err != nil {
			t.Fatalf("threads %d: Prove: %v", threads, err)
		}
		if err := groth16.Verify(keyconv.ProofToGnark(proof), f.vk, f.public); err != nil {
			t.Fatalf("threads %d: proof does not verify: %v", threads, err)
		}
		phases := timings.Phases(time.Second)
		if len(phases) != 4 {
			t.Fatalf("phases %v, want ntt, msm_g1, msm_g2, finish", phases)
		}
		var busy time.Duration
		for i, name := range []string{sdk.PhaseNTT, sdk.PhaseMSMG1, sdk.PhaseMSMG2, sdk.PhaseFinish} {
			p := phases[i]
			busy += p.DeviceBusy
			if p.Name != name || p.Start < time.Second || p.Wall <= 0 || p.DeviceBusy > p.Wall {
				t.Errorf("phase %d = %+v, want %s starting after the offset", i, p, name)
			}
			if name != sdk.PhaseMSMG2 && p.DeviceBusy != p.Wall {
				t.Errorf("phase %s: busy %v, wall %v", name, p.DeviceBusy, p.Wall)
			}
			// The two MSM phases start together; the others follow each other.
			prev := i - 1
			if name == sdk.PhaseMSMG2 {
				prev = 0
			}
			if name == sdk.PhaseFinish {
				prev = 1
				if phases[2].Start+phases[2].Wall > phases[1].Start+phases[1].Wall {
					prev = 2
				}
			}
			if i > 0 && p.Start < phases[prev].Start+phases[prev].Wall {
				t.Errorf("phase %s starts before %s ends", p.Name, phases[prev].Name)
			}
		}
		// The overlap is counted once: busy is the span from ntt's start to finish's end
		// less the gap, never more than the wall time Prove took.
		end := phases[3].Start + phases[3].Wall - time.Second
		if timings.Busy() != busy || busy <= 0 || busy > end {
			t.Errorf("Busy() = %v, phases sum to %v, Prove took %v", timings.Busy(), busy, end)
		}
	}
}

func TestProveFreshRandomness(t *testing.T) {
	f := chainFixture(t, 700)
	sol := f.solution
	p1, _, err := Prove(context.Background(), bls, f.pk, sol.W, sol.A, sol.B, 0)
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := Prove(context.Background(), bls, f.pk, sol.W, sol.A, sol.B, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p1.Ar.Equal(&p2.Ar) || p1.Krs.Equal(&p2.Krs) {
		t.Error("two proofs of the same witness are equal: r and s are not fresh")
	}
}

func TestProveWrongWitnessDoesNotVerify(t *testing.T) {
	f := chainFixture(t, 700)
	sol := f.solution
	w := append([]fr.Element(nil), sol.W...)
	w[len(w)-1].SetUint64(42) // an internal wire: the witness no longer satisfies the R1CS
	proof, _, err := Prove(context.Background(), bls, f.pk, w, sol.A, sol.B, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(keyconv.ProofToGnark(proof), f.vk, f.public); err == nil {
		t.Fatal("a proof over a tampered wire vector verifies")
	}
}

func TestAssembleMatchesComputedMSMs(t *testing.T) {
	// ComputeMSMs + Assemble with chosen r, s is what Prove does: the proof verifies,
	// and changing the MSM results breaks it.
	f := chainFixture(t, 700)
	sol := f.solution
	ctx := context.Background()
	h, err := ComputeH(ctx, bls, sol.A, sol.B, f.pk.DomainSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ComputeMSMs(ctx, bls, f.pk, sol.W, h, 0)
	if err != nil {
		t.Fatal(err)
	}
	var r, s fr.Element
	r.SetUint64(7)
	s.SetUint64(11)
	if err := groth16.Verify(keyconv.ProofToGnark(Assemble(bls, f.pk, res, r, s)), f.vk, f.public); err != nil {
		t.Fatalf("assembled proof does not verify: %v", err)
	}
	bad := res
	bad.Krs2.AddMixed(&f.pk.G1Alpha)
	if err := groth16.Verify(keyconv.ProofToGnark(Assemble(bls, f.pk, bad, r, s)), f.vk, f.public); err == nil {
		t.Fatal("proof with a wrong Krs2 verifies")
	}
}

func TestProveBadInput(t *testing.T) {
	f := chainFixture(t, 700)
	sol := f.solution
	tests := []struct {
		name    string
		w, a, b []fr.Element
	}{
		{"short W", sol.W[1:], sol.A, sol.B},
		{"A and B differ", sol.W, sol.A, sol.B[1:]},
		{"more constraints than the domain", sol.W, make([]fr.Element, f.pk.DomainSize+1), make([]fr.Element, f.pk.DomainSize+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Prove(context.Background(), bls, f.pk, tt.w, tt.a, tt.b, 0)
			if k := sdk.KindOf(err); err == nil || k != sdk.ErrInvalidArgument {
				t.Fatalf("err = %v, want invalid_argument", err)
			}
		})
	}
	broken := *f.pk
	broken.G1Z = broken.G1Z[:10]
	if _, _, err := Prove(context.Background(), bls, &broken, sol.W, sol.A, sol.B, 0); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("key with too few Z points: err %v, want invalid_argument", err)
	}
	if _, _, err := Prove(context.Background(), bls, nil, sol.W, sol.A, sol.B, 0); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("nil key: err %v, want invalid_argument", err)
	}
}

func TestProveCancel(t *testing.T) {
	f := chainFixture(t, 700)
	sol := f.solution

	t.Run("before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		begin := time.Now()
		_, timings, err := Prove(ctx, bls, f.pk, sol.W, sol.A, sol.B, 0)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want one wrapping context.Canceled", err)
		}
		if d := time.Since(begin); d > 100*time.Millisecond {
			t.Errorf("cancelled Prove took %v", d)
		}
		if timings.NTT != (Span{}) {
			t.Errorf("NTT ran: %+v", timings.NTT)
		}
	})

	for _, stopAfter := range []string{sdk.PhaseNTT, sdk.PhaseMSMG2} {
		t.Run("after "+stopAfter, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			afterPhase = func(name string) {
				if name == stopAfter {
					cancel()
				}
			}
			defer func() { afterPhase = nil }()
			_, timings, err := Prove(ctx, bls, f.pk, sol.W, sol.A, sol.B, 0)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want one wrapping context.Canceled", err)
			}
			if timings.Finish != (Span{}) || (stopAfter == sdk.PhaseNTT && timings.MSMG1 != (Span{})) {
				t.Errorf("work went on after cancellation: %+v", timings)
			}
		})
	}
}

// cancelAfter is a context that reports itself cancelled from its checks-th Err call
// on: it stands for a cancel that arrives while an MSM's first chunk runs.
type cancelAfter struct {
	context.Context
	checks, calls int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls >= c.checks {
		return context.Canceled
	}
	return nil
}

// TestMSMStopsInsideCancel checks that a chunked MSM stops at the chunk after a
// cancel: one that arrives during the first chunk stops it before the second.
func TestMSMStopsInsideCancel(t *testing.T) {
	f := chainFixture(t, 700)
	points := f.pk.G1A
	scalars := make([]fr.Element, len(points))
	for i := range scalars {
		scalars[i].SetRandom()
	}
	ctx := &cancelAfter{Context: context.Background(), checks: 2}
	chunk := len(points) / 4
	if _, err := MultiExpG1(ctx, bls, points, scalars, 1, chunk); !errors.Is(err, context.Canceled) {
		t.Fatalf("MSM cancelled during its first chunk: err %v, want context.Canceled", err)
	}
	if ctx.calls != 2 {
		t.Errorf("the MSM checked its context %d times, want 2 (before the first chunk, and before the second, where it stops)", ctx.calls)
	}
}

// TestG2Tasks checks the G2 MSM's task count against gnark's rule (twice the
// threads up to 16 threads, the threads above).
func TestG2Tasks(t *testing.T) {
	for _, tt := range []struct{ threads, want int }{{1, 2}, {2, 4}, {16, 32}, {17, 17}, {64, 64}} {
		if got := g2Tasks(tt.threads); got != tt.want {
			t.Errorf("g2Tasks(%d) = %d, want %d", tt.threads, got, tt.want)
		}
	}
}

// TestWorkerEnv checks the worker's GODEBUG: madvdontneed=0 added, before any
// setting of the backend's own, which then wins; the rest of the environment
// kept, and the backend's own slice left as it was.
func TestWorkerEnv(t *testing.T) {
	tests := []struct {
		env, want []string
	}{
		{[]string{"A=1"}, []string{"A=1", "GODEBUG=madvdontneed=0"}},
		{[]string{"GODEBUG=gctrace=1", "B=2"}, []string{"GODEBUG=madvdontneed=0,gctrace=1", "B=2"}},
		{[]string{"GODEBUG=madvdontneed=1"}, []string{"GODEBUG=madvdontneed=0,madvdontneed=1"}},
		{nil, []string{"GODEBUG=madvdontneed=0"}},
	}
	for _, tt := range tests {
		before := slices.Clone(tt.env)
		if got := workerEnv(tt.env); !slices.Equal(got, tt.want) {
			t.Errorf("workerEnv(%q) = %q, want %q", tt.env, got, tt.want)
		}
		if !slices.Equal(tt.env, before) {
			t.Errorf("workerEnv changed its argument to %q", tt.env)
		}
	}
}

// bls is the curve most of these tests prove on.
var bls = curve.BLS12381{}

// TestDomainCacheBuildsApart: while one domain is being built, another is built and
// returned without waiting for it, and callers of the one being built wait for that
// build instead of starting their own.
func TestDomainCacheBuildsApart(t *testing.T) {
	slow := domainKey{ecc.BLS12_381, 1 << 4, true}
	for _, k := range []domainKey{slow, {ecc.BLS12_381, 1 << 3, true}} {
		domains.Lock()
		delete(domains.m, k) // cached by an earlier test or run
		domains.Unlock()
	}
	release := make(chan struct{})
	var builds atomic.Int32
	slowBuild := func() curve.Domain[fr.Element] {
		builds.Add(1)
		<-release
		return bls.NewDomain(1<<4, nil)
	}
	got := make(chan *FFTDomain[fr.Element], 3)
	for range 3 {
		go func() {
			d, err := cachedDomain(ecc.BLS12_381, slow, slowBuild)
			if err != nil {
				t.Error(err)
			}
			got <- d
		}()
	}
	// Another domain, while the slow one is held up.
	fast, err := cachedDomain(ecc.BLS12_381, domainKey{ecc.BLS12_381, 1 << 3, true}, func() curve.Domain[fr.Element] {
		return bls.NewDomain(1<<3, nil)
	})
	if err != nil || fast.Size() != 1<<3 {
		t.Fatalf("the other domain: %v", err)
	}
	close(release)
	first := <-got
	for range 2 {
		if d := <-got; d != first {
			t.Error("callers of one domain got different domains")
		}
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("the domain was built %d times, want once", n)
	}
	runtime.KeepAlive(first)
}
