//go:build cuda

package gpu

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	csbn "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/circom/circomtest"
	"github.com/zkhost/zkhost/sdk/circomconv"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestComputeHForms checks H on the device against the CPU prover's, for both
// curves and both forms (gnark's computeH, snarkjs's values on its odd coset:
// refprover.ComputeH and ComputeHSnarkjs), at sizes of one, two and three NTT
// passes, with the last rows zero as a circuit's padding leaves them.
func TestComputeHForms(t *testing.T) {
	needDevice(t)
	for _, logN := range []int{1, 4, 11, 16, 20} {
		checkHForms(t, curve.BLS12381{}, logN)
		checkHForms(t, curve.BN254{}, logN)
	}
}

func checkHForms[E Fr, PE curve.Scalar[E], G1, G1J, G2, G2J any](t *testing.T, c curve.Curve[E, G1, G1J, G2, G2J], logN int) {
	t.Helper()
	n := max(1, 1<<logN-3)
	a, b := make([]E, n), make([]E, n)
	for i := range a {
		PE(&a[i]).SetRandom()
		PE(&b[i]).SetRandom()
	}
	pad := func(v []E) []E { return append(append([]E(nil), v...), make([]E, 1<<logN-n)...) }
	for _, form := range []keyfile.HForm{keyfile.HFormGnark, keyfile.HFormSnarkjs} {
		compute := refprover.ComputeH[E, PE, G1, G1J, G2, G2J]
		if form == keyfile.HFormSnarkjs {
			compute = refprover.ComputeHSnarkjs[E, PE, G1, G1J, G2, G2J]
		}
		want, err := compute(context.Background(), c, pad(a), pad(b), 1<<logN, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ComputeHForm(0, a, b, logN, form)
		if err != nil {
			t.Fatalf("%s, 2^%d, form %d: %v", curve.Title(c.ID()), logN, form, err)
		}
		for i := range want {
			if !PE(&got[i]).Equal(&want[i]) {
				t.Errorf("%s, 2^%d, form %d: h[%d] differs from refprover's", curve.Title(c.ID()), logN, form, i)
				break
			}
		}
	}
}

// TestGroth16BN254 proves partitions of a BN254 chain circuit through the
// device pipeline, resident and streamed, and gnark's BN254 verifier accepts
// every proof; a proof checked against another partition's public input is
// refused (the check can fail).
func TestGroth16BN254(t *testing.T) {
	needDevice(t)
	const steps = 1 << 12
	ccs, vk, pk := setupBN254Chain(t, steps)
	for _, chunk := range []uint64{0, 1 << 11} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			key, err := LoadGroth16Key(0, pk, chunk)
			if err != nil {
				t.Fatal(err)
			}
			defer key.Free()
			if key.Curve() != ecc.BN254 {
				t.Fatalf("key on %s, want BN254", key.Curve())
			}
			slot, err := key.NewSlot()
			if err != nil {
				t.Fatal(err)
			}
			defer slot.Free()
			var publics []witness.Witness
			var proofs []*groth16_bn254.Proof
			for i := range 3 {
				public, sol := solveBN254Chain(t, ccs, steps, uint64(3+i))
				if err := StageCurve(slot, sol.W, sol.A, sol.B, 2); err != nil {
					t.Fatal(err)
				}
				res, _, err := ProveCurve(curve.BN254{}, key, slot, len(sol.A))
				if err != nil {
					t.Fatal(err)
				}
				r, s, err := refprover.RandomRS[bn254fr.Element]()
				if err != nil {
					t.Fatal(err)
				}
				proof := keyconv.ProofToGnarkBN254(refprover.Assemble(curve.BN254{}, pk, res, r, s))
				if err := groth16.Verify(proof, vk, public); err != nil {
					t.Errorf("partition %d: gnark refused the BN254 proof: %v", i, err)
				}
				publics, proofs = append(publics, public), append(proofs, proof)
			}
			if err := groth16.Verify(proofs[0], vk, publics[1]); err == nil {
				t.Error("gnark accepted partition 0's proof for partition 1's public input")
			}
			if chunk == 0 {
				// A resident key's MSMs over W run witness-aware (W's 0s and 1s
				// apart, classified as BN254 scalars): the same sums as dense.
				_, sol := solveBN254Chain(t, ccs, steps, 3)
				var sums [2]refprover.MSMResults[bn254.G1Jac, bn254.G2Jac]
				for i, dense := range []bool{false, true} {
					if err := key.SetOptions(ProveOptions{DenseMSM: dense}); err != nil {
						t.Fatal(err)
					}
					if err := StageCurve(slot, sol.W, sol.A, sol.B, 2); err != nil {
						t.Fatal(err)
					}
					if sums[i], _, err = ProveCurve(curve.BN254{}, key, slot, len(sol.A)); err != nil {
						t.Fatal(err)
					}
				}
				for _, name := range differingSums(curve.BN254{}, sums[0], sums[1]) {
					t.Errorf("the witness-aware %s differs from the dense one", name)
				}
			}
			// A BLS12-381 curve, or BLS12-381 scalars, for a BN254 key: refused.
			if _, _, err := key.Prove(slot, 1); err == nil {
				t.Error("a BLS12-381 proof of a BN254 key was not refused")
			}
			// The key's shape, another curve's scalars: only the curve is wrong.
			_, sol := solveBN254Chain(t, ccs, steps, 3)
			w, ab := make([]fr.Element, len(sol.W)), make([]fr.Element, len(sol.A))
			if err := slot.Stage(w, ab, ab, 1); err == nil || !strings.Contains(err.Error(), "BLS12-381 scalars") {
				t.Errorf("BLS12-381 scalars staged into a BN254 key's slot: %v", err)
			}
		})
	}
}

// TestGroth16SnarkjsForm proves with keys whose H points are in snarkjs's form,
// on both curves, resident and streamed, and compares the device's five sums
// with the CPU prover's for the same key and witness (refprover's
// ComputeHSnarkjs, then its MSMs): the points are a gnark setup's, so no
// verifier would accept the proof, but the sums are what snarkjs's points
// need (the circom path through the daemon, checked by snarkjs, runs on the
// CPU backend in make test).
func TestGroth16SnarkjsForm(t *testing.T) {
	needDevice(t)
	const steps = 1 << 11
	t.Run("BLS12-381", func(t *testing.T) {
		ccs, _, pk := setupKey(t, &testcircuit.Chain{N: steps})
		_, sol := solveFor(t, ccs, testcircuit.ChainAssignment(steps, 3, 5))
		checkSnarkjsForm(t, curve.BLS12381{}, pk, sol.W, sol.A, sol.B)
	})
	t.Run("BN254", func(t *testing.T) {
		ccs, _, pk := setupBN254Chain(t, steps)
		_, sol := solveBN254Chain(t, ccs, steps, 3)
		checkSnarkjsForm(t, curve.BN254{}, pk, sol.W, sol.A, sol.B)
	})
}

// setupBN254Chain sets a BN254 chain circuit of steps steps up with gnark: its
// constraint system, verifying key and proving key in zkhost's format.
func setupBN254Chain(t *testing.T, steps int) (constraint.ConstraintSystem, groth16.VerifyingKey, *keyfile.BN254Key) {
	t.Helper()
	return setupOn(t, ecc.BN254, &testcircuit.Chain{N: steps}, func(gpk groth16.ProvingKey) (*keyfile.BN254Key, error) {
		return keyconv.FromGnarkBN254(gpk.(*groth16_bn254.ProvingKey))
	})
}

// solveBN254Chain solves the chain of steps steps from input x: its public
// witness and gnark's solution.
func solveBN254Chain(t *testing.T, ccs constraint.ConstraintSystem, steps int, x uint64) (witness.Witness, *csbn.R1CSSolution) {
	t.Helper()
	public, sol := solveOn(t, ecc.BN254, ccs, testcircuit.ChainAssignmentOver(ecc.BN254.ScalarField(), steps, x, 5))
	return public, sol.(*csbn.R1CSSolution)
}

// checkSnarkjsForm proves the partition w, a, b with gnarkForm's points marked as
// in snarkjs's H form, resident and streamed, and compares the five sums with
// refprover's for the same key.
func checkSnarkjsForm[E Fr, PE curve.Scalar[E], G1, G1J, G2, G2J any](t *testing.T, c curve.Curve[E, G1, G1J, G2, G2J], gnarkForm *keyfile.ProvingKey[G1, G2], w, a, b []E) {
	t.Helper()
	// snarkjs's form has N Z points (H's values on the coset), gnark's N-1:
	// one more, any point, as a .zkey's H section would give.
	pk := *gnarkForm
	pk.HForm = keyfile.HFormSnarkjs
	pk.G1Z = append(slices.Clone(pk.G1Z), pk.G1Z[0])
	if err := pk.Check(); err != nil {
		t.Fatalf("the snarkjs-form key: %v", err)
	}
	ctx := context.Background()
	pad := func(v []E) []E { return append(append([]E(nil), v...), make([]E, int(pk.DomainSize)-len(v))...) }
	h, err := refprover.ComputeHSnarkjs[E, PE](ctx, c, pad(a), pad(b), pk.DomainSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := refprover.ComputeMSMs(ctx, c, &pk, w, h, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []uint64{0, 1 << 10} {
		got := proveOnce(t, c, &pk, chunk, w, a, b)
		for _, name := range differingSums(c, got, want) {
			t.Errorf("%s, chunk %d: the device's %s differs from refprover's", curve.Title(c.ID()), chunk, name)
		}
	}
}

// differingSums names the sums of got that are not want's points (compared
// affine: the Jacobian coordinates of one point differ).
func differingSums[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], got, want refprover.MSMResults[G1J, G2J]) []string {
	g1 := func(p G1J) any { return c.G1ToAffine(&p) }
	var names []string
	for _, s := range []struct {
		name      string
		got, want any
	}{
		{"Ar", g1(got.Ar), g1(want.Ar)}, {"Bs1", g1(got.Bs1), g1(want.Bs1)},
		{"Krs", g1(got.Krs), g1(want.Krs)}, {"Krs2 (H)", g1(got.Krs2), g1(want.Krs2)},
		{"Bs2", c.G2ToAffine(&got.Bs2), c.G2ToAffine(&want.Bs2)},
	} {
		if s.got != s.want {
			names = append(names, s.name)
		}
	}
	return names
}

// TestGroth16SnarkjsKeys proves with keys that snarkjs set up (sdk/circom's
// testdata: circomlib's Poseidon over 16 bits, compiled by circom2, set up by
// snarkjs 0.7.6, on both curves): the device computes snarkjs's H for the
// .zkey's own H points (N of them), and gnark's verifier, with the verifying
// key read from the same .zkey, accepts the proof, resident and streamed; the
// proof is refused for another public value.
func TestGroth16SnarkjsKeys(t *testing.T) {
	needDevice(t)
	t.Run("BN254", func(t *testing.T) { checkSnarkjsKey(t, curve.BN254{}, "bn128") })
	t.Run("BLS12-381", func(t *testing.T) { checkSnarkjsKey(t, curve.BLS12381{}, "bls12381") })
}

func checkSnarkjsKey[E Fr, PE curve.Scalar[E], G1, G1J, G2, G2J any](t *testing.T, c curve.Curve[E, G1, G1J, G2, G2J], prime string) {
	t.Helper()
	file := func(ext string) string {
		return filepath.Join("..", "..", "sdk", "circom", "testdata", "poseidonbits_"+prime+ext)
	}
	z, err := circom.ReadZKey(file(".zkey"))
	if err != nil {
		t.Fatal(err)
	}
	r1cs, err := circom.ReadR1CS(file(".r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	wtns, err := circom.ReadWitness(file(".wtns"))
	if err != nil {
		t.Fatal(err)
	}
	pk, err := circomconv.ProvingKey[G1, G2](z)
	if err != nil {
		t.Fatal(err)
	}
	if pk.HForm != keyfile.HFormSnarkjs {
		t.Fatalf("the .zkey's key is in H form %d, want snarkjs's", pk.HForm)
	}
	vk, err := circomconv.VerifyingKey(z)
	if err != nil {
		t.Fatal(err)
	}
	w, err := circomconv.Assignment[E, PE](wtns)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := circomconv.ConstraintSystem(r1cs)
	if err != nil {
		t.Fatal(err)
	}
	a, b, err := circomtest.Rows[E, PE](sys, w)
	if err != nil {
		t.Fatal(err)
	}
	public := w[1 : 1+z.NumPublic]
	for _, chunk := range []uint64{0, 1 << 10} {
		res := proveOnce(t, c, pk, chunk, w, a, b)
		rr, ss, err := refprover.RandomRS[E, PE]()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := refprover.Assemble[E, PE](c, pk, res, rr, ss).WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		proof := groth16.NewProof(c.ID())
		if _, err := proof.ReadFrom(&buf); err != nil {
			t.Fatal(err)
		}
		other := slices.Clone(public)
		PE(&other[0]).SetUint64(12345)
		for _, tc := range []struct {
			values []E
			accept bool
		}{{public, true}, {other, false}} {
			pw, err := circomtest.PublicWitness(c.ID(), tc.values)
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, vk, pw); (err == nil) != tc.accept {
				t.Errorf("chunk %d, public values %v: gnark's verifier says %v of the device's proof with snarkjs's key, want accepted %v", chunk, tc.values, err, tc.accept)
			}
		}
	}
}

// proveOnce loads pk on the device (streamed in chunks of chunk points; 0:
// resident), proves the partition w, a, b in one slot and frees both: the
// device's five sums.
func proveOnce[E Fr, G1, G1J, G2, G2J any](t *testing.T, c curve.Curve[E, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2], chunk uint64, w, a, b []E) refprover.MSMResults[G1J, G2J] {
	t.Helper()
	key, err := LoadGroth16Key(0, pk, chunk)
	if err != nil {
		t.Fatalf("chunk %d: %v", chunk, err)
	}
	defer key.Free()
	slot, err := key.NewSlot()
	if err != nil {
		t.Fatalf("chunk %d: %v", chunk, err)
	}
	defer slot.Free()
	if err := StageCurve(slot, w, a, b, 2); err != nil {
		t.Fatalf("chunk %d: %v", chunk, err)
	}
	res, _, err := ProveCurve(c, key, slot, len(a))
	if err != nil {
		t.Fatalf("chunk %d: %v", chunk, err)
	}
	return res
}
