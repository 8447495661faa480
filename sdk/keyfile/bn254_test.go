package keyfile

import (
	"math/big"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
)

// TestRoundTripBN254: a BN254 key (its points 64 and 128 bytes, not BLS12-381's 96
// and 192) is written with its curve id, read back point for point, and refused as
// a BLS12-381 key by name.
func TestRoundTripBN254(t *testing.T) {
	_, _, g1, g2 := bn254.Generators()
	g1s := func(n int, seed int64) []bn254.G1Affine {
		out := make([]bn254.G1Affine, n)
		for i := range out {
			out[i].ScalarMultiplication(&g1, big.NewInt(seed+int64(i)))
		}
		return out
	}
	g2s := func(n int, seed int64) []bn254.G2Affine {
		out := make([]bn254.G2Affine, n)
		for i := range out {
			out[i].ScalarMultiplication(&g2, big.NewInt(seed+int64(i)))
		}
		return out
	}
	const nbWires, domain = 6, 8
	infA := []bool{false, true, false, false, false, false}
	small := g1s(3, 1000)
	k := &BN254Key{
		DomainSize: domain, NbWires: nbWires, NbPublic: 2, HForm: HFormSnarkjs,
		G1Alpha: small[0], G1Beta: small[1], G1Delta: small[2],
		G1A: g1s(5, 10), G1B: g1s(6, 20), G1K: g1s(4, 30), G1Z: g1s(domain, 40),
		G2Beta: g2s(1, 50)[0], G2Delta: g2s(1, 51)[0], G2B: g2s(6, 60),
		InfinityA: infA, InfinityB: make([]bool, nbWires),
	}
	f := writeAndOpen(t, k)
	if f.Curve() != ecc.BN254 {
		t.Fatalf("curve %s, want BN254", f.Curve())
	}
	if h := f.Header(); h.DomainSize != domain || h.NbWires != nbWires || h.NbPublic != 2 || h.HForm != HFormSnarkjs {
		t.Fatalf("header %+v", h)
	}
	if _, err := f.BLS12381(); err == nil || !strings.Contains(err.Error(), "holds a bn254 key, not bls12-381") {
		t.Fatalf("BLS12381() of a BN254 file: %v", err)
	}
	got, err := f.BN254()
	if err != nil {
		t.Fatal(err)
	}
	g1Equal := func(name string, a, b []bn254.G1Affine) {
		if len(a) != len(b) {
			t.Fatalf("%s: %d points, want %d", name, len(a), len(b))
		}
		for i := range a {
			if !a[i].Equal(&b[i]) {
				t.Fatalf("%s[%d] differs", name, i)
			}
		}
	}
	g1Equal("g1_small", []bn254.G1Affine{got.G1Alpha, got.G1Beta, got.G1Delta}, small)
	g1Equal("g1_a", got.G1A, k.G1A)
	g1Equal("g1_b", got.G1B, k.G1B)
	g1Equal("g1_k", got.G1K, k.G1K)
	g1Equal("g1_z", got.G1Z, k.G1Z)
	for i := range k.G2B {
		if !got.G2B[i].Equal(&k.G2B[i]) {
			t.Fatalf("g2_b[%d] differs", i)
		}
	}
	if !got.G2Beta.Equal(&k.G2Beta) || !got.G2Delta.Equal(&k.G2Delta) || !got.InfinityA[1] || got.InfinityA[0] {
		t.Fatal("g2_small or inf_a differs")
	}
	for _, s := range f.Sections() {
		if s.Kind == SectionG1A && s.Length != 5*64 || s.Kind == SectionG2B && s.Length != 6*128 {
			t.Errorf("section %s: %d bytes", s.Kind, s.Length)
		}
	}
}
