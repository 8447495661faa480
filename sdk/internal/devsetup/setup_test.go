package devsetup

import (
	"context"
	"errors"
	"math/big"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// The test circuits: both example circuits, small. chain-k3 has 8 constraints (a full
// domain), merkle-d2-k2 has a domain with padding and wires absent from B.
var testSpecs = []struct {
	name   string
	params map[string]int
}{
	{"chain", map[string]int{"k": 3}},
	{"merkle", map[string]int{"k": 2, "d": 2}},
}

func compile(t *testing.T, i int) (circuits.Spec, *cs.R1CS) {
	t.Helper()
	return testcircuit.Compile(t, testSpecs[i].name, testSpecs[i].params)
}

// TestSetupMatchesDefinition checks every point of a key made with known toxic waste
// against the Groth16 definitions, computed the slow way: Lagrange polynomials as
// products over the domain, each point by its own scalar multiplication.
func TestSetupMatchesDefinition(t *testing.T) {
	tw := ToxicWaste{}
	for i, e := range []*fr.Element{&tw.Tau, &tw.Alpha, &tw.Beta, &tw.Gamma, &tw.Delta} {
		e.SetUint64(uint64(1000003 * (i + 2))) // fixed, so a failure reproduces
	}
	var copied, own int
	for i := range testSpecs {
		s, r1cs := compile(t, i)
		t.Run(s.ID(), func(t *testing.T) {
			pk, vk, err := SetupWith(context.Background(), r1cs, tw)
			if err != nil {
				t.Fatal(err)
			}
			c, o := checkAgainstDefinition(t, r1cs, &tw, pk, vk)
			copied, own = copied+c, own+o
		})
	}
	// Both ways to a [B]₁ point are covered: copied from A (A = B) and multiplied.
	if copied == 0 || own == 0 {
		t.Errorf("the test circuits have %d wires with A = B and %d with their own B: both must occur", copied, own)
	}
}

// checkAgainstDefinition compares every point of pk and vk with its definition and
// returns how many wires have a nonzero B scalar equal to (copied) and different from
// (own) their A scalar.
func checkAgainstDefinition(t *testing.T, r1cs *cs.R1CS, tw *ToxicWaste, pk *keyfile.BLS12381Key, vk *groth16_bls12381.VerifyingKey) (copied, own int) {
	t.Helper()
	nbCons := r1cs.GetNbConstraints()
	n := uint64(1)
	for n < uint64(nbCons) {
		n <<= 1
	}
	omega, err := fr.Generator(n)
	if err != nil {
		t.Fatal(err)
	}
	pow := func(x fr.Element, e uint64) fr.Element {
		var r fr.Element
		r.Exp(x, new(big.Int).SetUint64(e))
		return r
	}
	// L_i(τ) = Π_{j≠i} (τ − ω^j)/(ω^i − ω^j).
	lag := make([]fr.Element, nbCons)
	for i := range lag {
		num, den := fr.One(), fr.One()
		wi := pow(omega, uint64(i))
		for j := range n {
			if j == uint64(i) {
				continue
			}
			wj := pow(omega, j)
			var d fr.Element
			num.Mul(&num, d.Sub(&tw.Tau, &wj))
			den.Mul(&den, d.Sub(&wi, &wj))
		}
		lag[i].Div(&num, &den)
	}
	nbWires := r1cs.NbInternalVariables + r1cs.GetNbPublicVariables() + r1cs.GetNbSecretVariables()
	a, b, c := make([]fr.Element, nbWires), make([]fr.Element, nbWires), make([]fr.Element, nbWires)
	for i, con := range r1cs.GetR1Cs() {
		for _, side := range []struct {
			dst []fr.Element
			le  constraint.LinearExpression
		}{{a, con.L}, {b, con.R}, {c, con.O}} {
			for _, term := range side.le {
				coeff := r1cs.Coefficients[term.CoeffID()]
				var p fr.Element
				p.Mul(&coeff, &lag[i])
				side.dst[term.WireID()].Add(&side.dst[term.WireID()], &p)
			}
		}
	}
	_, _, g1, g2 := bls12381.Generators()
	g1At := func(s fr.Element) bls12381.G1Affine {
		var p bls12381.G1Affine
		var b big.Int
		return *p.ScalarMultiplication(&g1, s.BigInt(&b))
	}
	g2At := func(s fr.Element) bls12381.G2Affine {
		var p bls12381.G2Affine
		var b big.Int
		return *p.ScalarMultiplication(&g2, s.BigInt(&b))
	}
	eq1 := func(what string, got, want bls12381.G1Affine) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %s, want %s", what, got.String(), want.String())
		}
	}
	eq1("[α]₁", pk.G1Alpha, g1At(tw.Alpha))
	eq1("[β]₁", pk.G1Beta, g1At(tw.Beta))
	eq1("[δ]₁", pk.G1Delta, g1At(tw.Delta))
	if pk.G2Beta != g2At(tw.Beta) || pk.G2Delta != g2At(tw.Delta) || vk.G2.Gamma != g2At(tw.Gamma) {
		t.Error("[β]₂, [δ]₂ or [γ]₂ differs from its definition")
	}
	if pk.DomainSize != n || pk.NbWires != uint64(nbWires) || pk.NbPublic != uint64(r1cs.GetNbPublicVariables()) {
		t.Fatalf("sizes: domain %d wires %d public %d", pk.DomainSize, pk.NbWires, pk.NbPublic)
	}
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&tw.Gamma)
	deltaInv.Inverse(&tw.Delta)
	ia, ib := 0, 0
	for w := range nbWires {
		if a[w].IsZero() != pk.InfinityA[w] || b[w].IsZero() != pk.InfinityB[w] {
			t.Fatalf("wire %d: infinity flags %v %v, scalars zero %v %v", w, pk.InfinityA[w], pk.InfinityB[w], a[w].IsZero(), b[w].IsZero())
		}
		if !a[w].IsZero() {
			eq1("A", pk.G1A[ia], g1At(a[w]))
			ia++
		}
		if !b[w].IsZero() {
			if a[w].Equal(&b[w]) {
				copied++
			} else {
				own++
			}
			eq1("B", pk.G1B[ib], g1At(b[w]))
			if pk.G2B[ib] != g2At(b[w]) {
				t.Errorf("wire %d: [B]₂ differs from its definition", w)
			}
			ib++
		}
		var k, u fr.Element
		k.Mul(&a[w], &tw.Beta)
		u.Mul(&b[w], &tw.Alpha)
		k.Add(&k, &u).Add(&k, &c[w])
		if w < int(pk.NbPublic) {
			eq1("vk K", vk.G1.K[w], g1At(*k.Mul(&k, &gammaInv)))
		} else {
			eq1("pk K", pk.G1K[w-int(pk.NbPublic)], g1At(*k.Mul(&k, &deltaInv)))
		}
	}
	// Z: (τ^N − 1)/δ·τ^i at position bitreverse(i), the last one dropped.
	zdt := pow(tw.Tau, n)
	one := fr.One()
	zdt.Sub(&zdt, &one).Mul(&zdt, &deltaInv)
	logN := 0
	for 1<<logN < n {
		logN++
	}
	for j := range n - 1 {
		i := uint64(0)
		for bit := range logN {
			i |= (j >> bit & 1) << (logN - 1 - bit)
		}
		ti := pow(tw.Tau, i)
		var s fr.Element
		eq1("Z", pk.G1Z[j], g1At(*s.Mul(&zdt, &ti)))
	}
	return copied, own
}

// TestSetupShapeMatchesGnark compares a key from Setup with one from gnark's
// groth16.Setup for the same circuit: every length, flag and size.
func TestSetupShapeMatchesGnark(t *testing.T) {
	for i := range testSpecs {
		s, r1cs := compile(t, i)
		t.Run(s.ID(), func(t *testing.T) {
			pk, vk, err := Setup(context.Background(), r1cs)
			if err != nil {
				t.Fatal(err)
			}
			gpkAny, gvkAny, err := groth16.Setup(r1cs)
			if err != nil {
				t.Fatal(err)
			}
			gpk, err := keyconv.FromGnark(gpkAny.(*groth16_bls12381.ProvingKey))
			if err != nil {
				t.Fatal(err)
			}
			gvk := gvkAny.(*groth16_bls12381.VerifyingKey)
			for _, c := range []struct {
				what      string
				got, want int
			}{
				{"domain size", int(pk.DomainSize), int(gpk.DomainSize)},
				{"wires", int(pk.NbWires), int(gpk.NbWires)},
				{"public wires", int(pk.NbPublic), int(gpk.NbPublic)},
				{"g1_a", len(pk.G1A), len(gpk.G1A)},
				{"g1_b", len(pk.G1B), len(gpk.G1B)},
				{"g1_k", len(pk.G1K), len(gpk.G1K)},
				{"g1_z", len(pk.G1Z), len(gpk.G1Z)},
				{"g2_b", len(pk.G2B), len(gpk.G2B)},
				{"vk K", len(vk.G1.K), len(gvk.G1.K)},
				{"vk public-and-commitment-committed", len(vk.PublicAndCommitmentCommitted), len(gvk.PublicAndCommitmentCommitted)},
			} {
				if c.got != c.want {
					t.Errorf("%s: %d, gnark's Setup gives %d", c.what, c.got, c.want)
				}
			}
			if !slices.Equal(pk.InfinityA, gpk.InfinityA) || !slices.Equal(pk.InfinityB, gpk.InfinityB) {
				t.Error("infinity flags differ from gnark's Setup")
			}
			if !slices.Contains(pk.InfinityB, true) && s.Name == "merkle" {
				t.Error("merkle has no wire absent from B: the test no longer covers the filtering")
			}
		})
	}
}

// TestSetupProves proves with a key from Setup twice, through gnark's groth16.Prove and
// through refprover (the CPU backend's steps), and verifies both with groth16.Verify.
func TestSetupProves(t *testing.T) {
	ctx := context.Background()
	for i := range testSpecs {
		s, r1cs := compile(t, i)
		t.Run(s.ID(), func(t *testing.T) {
			pk, vk, err := Setup(ctx, r1cs)
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.Witness(0, 1)
			if err != nil {
				t.Fatal(err)
			}
			pub, err := w.Public()
			if err != nil {
				t.Fatal(err)
			}
			proof, err := groth16.Prove(r1cs, keyconv.ToGnark(pk), w)
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, vk, pub); err != nil {
				t.Fatalf("gnark's proof with the key from Setup: %v", err)
			}

			sol, err := r1cs.Solve(w)
			if err != nil {
				t.Fatal(err)
			}
			rs := sol.(*cs.R1CSSolution)
			proof2, _, err := refprover.Prove(ctx, curve.BLS12381{}, pk, rs.W, rs.A, rs.B, 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(keyconv.ProofToGnark(proof2), vk, pub); err != nil {
				t.Fatalf("refprover's proof with the key from Setup: %v", err)
			}

			// The other witness's public input does not verify: the check can fail.
			w2, err := s.Witness(1, 1)
			if err != nil {
				t.Fatal(err)
			}
			pub2, _ := w2.Public()
			if err := groth16.Verify(keyconv.ProofToGnark(proof2), vk, pub2); err == nil {
				t.Error("a proof verified against another witness's public input")
			}
		})
	}
}

// committed uses gnark's Commit API, which Setup refuses.
func TestSetupRefuses(t *testing.T) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &testcircuit.Committed{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Setup(context.Background(), ccs.(*cs.R1CS)); !errors.Is(err, ErrCommitments) {
		t.Errorf("Setup of a circuit with commitments: %v, want ErrCommitments", err)
	}
	_, chain := compile(t, 0)
	if _, _, err := SetupWith(context.Background(), chain, ToxicWaste{}); err == nil {
		t.Error("SetupWith zero toxic waste succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Setup(ctx, chain); !errors.Is(err, context.Canceled) {
		t.Errorf("Setup with a cancelled context: %v, want context.Canceled", err)
	}
}
