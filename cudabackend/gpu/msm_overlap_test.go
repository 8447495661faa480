//go:build cuda

package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestMSMUploadOverlap checks MSMs of host scalars uploaded in overlapped
// pieces (SetMSMUploadParts) against gnark-crypto, G1 and G2, and that the
// pieces were really used (MSMTiming.Chunks), or not, below 2^16 a piece.
func TestMSMUploadOverlap(t *testing.T) {
	needDevice(t)
	t.Cleanup(func() { SetMSMUploadParts(0) })
	rng := rand.New(rand.NewPCG(41, 42))
	const n = 1<<20 + 3
	pts := pointsG1(n)
	b := uploadG1(t, pts)
	sc := msmScalars(rng, n)
	// Edge values among the random ones: zeros, ones, r-1, equal scalars.
	for i := 0; i < n; i += 97 {
		switch i % 4 {
		case 0:
			sc[i] = fr.Element{}
		case 1:
			sc[i] = frOf(1)
		case 2:
			sc[i] = frOf(-1)
		case 3:
			sc[i] = sc[0]
		}
	}
	want := refG1(t, pts, sc)
	for _, c := range []struct {
		parts, n, pieces int
	}{
		{1, n, 1}, {2, n, 2}, {3, n, 3}, {4, n, 4}, {7, n, 7}, {16, n, 16},
		{4, 4 << 16, 4}, {4, 4<<16 - 1, 1}, {17, n, 1},
	} {
		t.Run(fmt.Sprintf("parts=%d n=%d", c.parts, c.n), func(t *testing.T) {
			SetMSMUploadParts(c.parts)
			w := want
			if c.n != n {
				w = refG1(t, pts[:c.n], sc[:c.n])
			}
			got, tm, err := b.MSM(sc[:c.n])
			if err != nil {
				t.Fatal(err)
			}
			if tm.Chunks != c.pieces {
				t.Errorf("the MSM ran in %d pieces, want %d", tm.Chunks, c.pieces)
			}
			if !got.Equal(&w) {
				t.Fatalf("G1 MSM of %d host scalars in %d pieces (c=%d) differs from gnark", c.n, tm.Chunks, tm.WindowBits)
			}
		})
	}
	t.Run("G2", func(t *testing.T) {
		const n2 = 3<<16 + 5
		p2 := pointsG2(n2)
		b2 := uploadG2(t, p2)
		want2 := refG2(t, p2, sc[:n2])
		SetMSMUploadParts(3)
		got, tm, err := b2.MSM(sc[:n2])
		if err != nil {
			t.Fatal(err)
		}
		if tm.Chunks != 3 || !got.Equal(&want2) {
			t.Fatalf("G2 MSM of %d host scalars in %d pieces (want 3): equal to gnark %v", n2, tm.Chunks, got.Equal(&want2))
		}
	})
}

// BenchmarkMSMG1UploadOverlap times the G1 MSM of host scalars (pageable Go
// memory, as BenchmarkMSMG1) with the upload in one copy before the work
// (parts=1) and in 4 and 8 overlapped pieces, at 2^22 and 2^24, and checks
// that all agree. The op time is the call's wall time, upload included.
func BenchmarkMSMG1UploadOverlap(b *testing.B) {
	needDevice(b)
	defer SetMSMUploadParts(0)
	rng := rand.New(rand.NewPCG(43, 44))
	for _, lg := range []int{22, 24} {
		n := 1 << lg
		sc := msmScalars(rng, n)
		bases, err := UploadG1(0, pointsG1(n))
		if err != nil {
			b.Fatal(err)
		}
		results := map[int]bls12381.G1Jac{}
		for _, parts := range []int{1, 4, 8} {
			b.Run(fmt.Sprintf("n=2^%d/parts=%d", lg, parts), func(b *testing.B) {
				SetMSMUploadParts(parts)
				var dev, up time.Duration
				for i := 0; i < b.N; i++ {
					r, tm, err := bases.MSM(sc)
					if err != nil {
						b.Fatal(err)
					}
					results[parts] = r
					dev += tm.Device
					up += tm.Upload
				}
				per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
				b.ReportMetric(per(dev), "dev-ms/op")
				b.ReportMetric(per(up), "upload-ms/op")
			})
		}
		bases.Free()
		for parts, r := range results {
			if one, ok := results[1]; ok && !r.Equal(&one) {
				b.Fatalf("n=2^%d: the MSM in %d pieces differs from the one in one piece", lg, parts)
			}
		}
	}
}
