//go:build cuda

package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// wantChunks is how many pieces an MSM of n host scalars is cut into when
// asked for pieces of at least one scalar: msm.cu's chunk_of.
func wantChunks(n, pieces int) int {
	pieces = min(pieces, n)
	chunk := (n + pieces - 1) / pieces
	return (n + chunk - 1) / chunk
}

// TestMSMPieces checks MSMs of host scalars copied in pieces that share one
// set of buckets (each piece's accumulation resumes from the sums of the ones
// before) against gnark-crypto: every edge case in G1 and G2, in 2 and 7
// pieces, over the bases alone and (G1) with precomputed copies; then a large
// G1 MSM with copies in 3 pieces, and that asking for one piece gives one.
// The pieces must really be used: the timing's chunk count says so.
func TestMSMPieces(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(81, 82))
	poolG1, poolG2 := pointsG1(1<<17), pointsG2(1<<17)
	var neg9G1 bls12381.G1Affine
	neg9G1.Neg(&poolG1[9])
	var neg9G2 bls12381.G2Affine
	neg9G2.Neg(&poolG2[9])
	for _, cs := range edgeCases(rng) {
		t.Run("G1/"+cs.name, func(t *testing.T) {
			pts := pointsOf(poolG1, cs.idx, neg9G1)
			b := uploadG1(t, pts)
			want := refG1(t, pts, cs.scalars)
			for _, maxd := range []int{1, MSMMaxDepth} {
				c, d := precompute(t, b, maxd)
				for _, pieces := range []int{2, 7} {
					tm := runPieces(t, b, len(cs.scalars), pieces, func() (bool, MSMTiming, error) {
						got, tm, err := b.MSM(cs.scalars)
						return got.Equal(&want), tm, err
					})
					checkDepth(t, tm, c, d)
				}
			}
		})
	}
	for _, cs := range edgeCases(rng) {
		t.Run("G2/"+cs.name, func(t *testing.T) {
			pts := pointsOf(poolG2, cs.idx, neg9G2)
			b := uploadG2(t, pts)
			want := refG2(t, pts, cs.scalars)
			for _, pieces := range []int{2, 7} {
				runPieces(t, b, len(cs.scalars), pieces, func() (bool, MSMTiming, error) {
					got, tm, err := b.MSM(cs.scalars)
					return got.Equal(&want), tm, err
				})
			}
		})
	}
	t.Run(fmt.Sprintf("G1/n=%d", 1<<20+3), func(t *testing.T) {
		n := 1<<20 + 3
		pts, sc := pointsG1(n), msmScalars(rng, n)
		want := refG1(t, pts, sc)
		b := uploadG1(t, pts)
		c, d := precompute(t, b, MSMMaxDepth)
		for _, tc := range []struct{ pieces, minPiece, chunks int }{
			{3, 1, 3},       // three pieces
			{8, 1 << 19, 2}, // as many as keep 2^19 scalars a piece
			{1, 0, 1},       // one: the whole copy in front
		} {
			if err := b.SetPieces(tc.pieces, tc.minPiece); err != nil {
				t.Fatal(err)
			}
			got, tm, err := b.MSM(sc)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(&want) || tm.Chunks != tc.chunks {
				t.Fatalf("%d pieces of at least %d: equal to gnark %v, %d chunks (want %d)", tc.pieces, tc.minPiece, got.Equal(&want), tm.Chunks, tc.chunks)
			}
			checkDepth(t, tm, c, d)
			t.Logf("%d pieces: device %v (upload %v, sort %v, accumulate %v, reduce %v), wall %v", tm.Chunks, tm.Device, tm.Upload, tm.Sort, tm.Accumulate, tm.Reduce, tm.Wall)
		}
	})
}

// pieceSetter is G1Bases or G2Bases.
type pieceSetter interface {
	SetPieces(pieces, minPiece int) error
}

// runPieces runs msm, an MSM of n host scalars on bases b that says whether
// it equals gnark-crypto's result, in pieces of at least one scalar, and
// fails unless it does and ran as many chunks as the pieces make. It returns
// the timing.
func runPieces(t *testing.T, b pieceSetter, n, pieces int, msm func() (bool, MSMTiming, error)) MSMTiming {
	t.Helper()
	if err := b.SetPieces(pieces, 1); err != nil {
		t.Fatal(err)
	}
	same, tm, err := msm()
	if err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Fatalf("%d pieces: GPU MSM differs from gnark (run c=%d d=%d, %d chunks)", pieces, tm.WindowBits, tm.Depth, tm.Chunks)
	}
	if w := wantChunks(n, pieces); tm.Pippenger > 0 && tm.Chunks != w {
		t.Fatalf("%d pieces of %d scalars: the MSM ran %d chunks, want %d", pieces, n, tm.Chunks, w)
	}
	return tm
}
