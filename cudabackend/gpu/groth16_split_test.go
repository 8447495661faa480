//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// bitsCircuit has a bit-heavy witness, as hashes and range checks give: each
// secret X[i] is cut into 64 bits, neighbouring bits are XORed (more 0/1
// wires), and the public Y is sum_i X[i]^3 + sum of weighted XORs (a few
// wires that are neither).
type bitsCircuit struct {
	X []frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *bitsCircuit) Define(api frontend.API) error {
	var sum frontend.Variable = 0
	for _, x := range c.X {
		bits := api.ToBinary(x, 64)
		for j := 0; j+1 < len(bits); j++ {
			sum = api.Add(sum, api.Mul(api.Xor(bits[j], bits[j+1]), j+1))
		}
		sum = api.Add(sum, api.Mul(x, x, x))
	}
	api.AssertIsEqual(sum, c.Y)
	return nil
}

func bitsAssignment(rng *rand.Rand, n int) *bitsCircuit {
	a := &bitsCircuit{X: make([]frontend.Variable, n)}
	y := new(big.Int)
	for i := range a.X {
		x := rng.Uint64()
		a.X[i] = x
		xb := new(big.Int).SetUint64(x)
		y.Add(y, new(big.Int).Exp(xb, big.NewInt(3), nil))
		for j := 0; j < 63; j++ {
			if (x>>j)&1 != (x>>(j+1))&1 {
				y.Add(y, big.NewInt(int64(j+1)))
			}
		}
	}
	a.Y = y
	return a
}

// TestGroth16BinarySplit proves a bit-heavy circuit with the witness-aware
// MSM on and off, compares each of the five MSM sums with the CPU
// reference (refprover), and checks both proofs with gnark's groth16.Verify.
func TestGroth16BinarySplit(t *testing.T) {
	needDevice(t)
	const nx = 64
	ccs, vk, pk := setupKey(t, &bitsCircuit{X: make([]frontend.Variable, nx)})
	public, sol := solveFor(t, ccs, bitsAssignment(rand.New(rand.NewPCG(31, 32)), nx))
	var binary int
	for i := range sol.W {
		if sol.W[i].IsZero() || sol.W[i].IsOne() {
			binary++
		}
	}
	if binary*10 < len(sol.W)*8 {
		t.Fatalf("the test circuit's witness is only %d of %d wires 0 or 1: not bit-heavy", binary, len(sol.W))
	}
	h, err := refprover.ComputeH(context.Background(), curve.BLS12381{}, sol.A, sol.B, pk.DomainSize, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := refprover.ComputeMSMs(context.Background(), curve.BLS12381{}, pk, sol.W, h, 0)
	if err != nil {
		t.Fatal(err)
	}

	// Resident keys run the MSMs over W split, without and with precomputed
	// copies of their points; streamed keys (chunks of 64 points here) run
	// dense whatever the switch says; a lean key (its proofs streamed, chunks
	// of 256) runs split with LeanSplit, its scalars classified on the host:
	// checked the same way.
	for _, tc := range []struct {
		chunk, depth uint64
		lean         bool
	}{{0, 1, false}, {0, MSMMaxDepth, false}, {64, 1, false}, {256, 1, true}} {
		chunk, depth := tc.chunk, int(tc.depth)
		plan := DevicePlan{Chunk: chunk, Depth: depth}
		if tc.lean {
			shape := ShapeOf(pk)
			plan = LeanPlan(shape, chunk, 2*HStreamMinBlock(shape.LogN), 0, 1, BoundResidency(0))
		}
		key, err := LoadGroth16KeyPlan(0, pk, plan, ProveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cp := key.Info().Copies; chunk == 0 && cp != KeyCopiesOf(ShapeOf(pk), depth) || depth > 1 && cp[0].D < 2 {
			t.Errorf("chunk %d, depth %d: the key keeps copies %v, KeyCopiesOf says %v", chunk, depth, cp, KeyCopiesOf(ShapeOf(pk), depth))
		}
		slot, err := key.NewSlot()
		if err != nil {
			key.Free()
			t.Fatal(err)
		}
		modes := []struct {
			name string
			opts ProveOptions
		}{{"split", ProveOptions{}}, {"no split", ProveOptions{DenseMSM: true}}, {"split again, radix 2", ProveOptions{NTTRadix: NTTRadix2}}}
		if tc.lean {
			modes = append(modes[1:2], struct {
				name string
				opts ProveOptions
			}{"lean split", ProveOptions{LeanSplit: true}}, struct {
				name string
				opts ProveOptions
			}{"lean split again, radix 2", ProveOptions{LeanSplit: true, NTTRadix: NTTRadix2}})
		}
		for _, mode := range modes {
			name := fmt.Sprintf("chunk %d, depth %d, lean %v, %s", chunk, depth, tc.lean, mode.name)
			if err := key.SetOptions(mode.opts); err != nil {
				t.Fatal(err)
			}
			if err := slot.Stage(sol.W, sol.A, sol.B, 2); err != nil {
				t.Fatal(err)
			}
			got, _, err := key.Prove(slot, len(sol.A))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, c := range []struct {
				name string
				ok   bool
			}{
				{"Ar (A over W)", got.Ar.Equal(&want.Ar)},
				{"Bs1 (B over W)", got.Bs1.Equal(&want.Bs1)},
				{"Krs (K over private W)", got.Krs.Equal(&want.Krs)},
				{"Krs2 (Z over H)", got.Krs2.Equal(&want.Krs2)},
				{"Bs2 (G2 B over W)", got.Bs2.Equal(&want.Bs2)},
			} {
				if !c.ok {
					t.Errorf("%s (%d of %d wires 0 or 1): %s differs from the CPU reference", name, binary, len(sol.W), c.name)
				}
			}
			r, rs, err := refprover.RandomRS[fr.Element]()
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(keyconv.ProofToGnark(refprover.Assemble(curve.BLS12381{}, pk, got, r, rs)), vk, public); err != nil {
				t.Errorf("%s: groth16.Verify: %v", name, err)
			}
		}
		if err := slot.Free(); err != nil {
			t.Error(err)
		}
		if err := key.Free(); err != nil {
			t.Error(err)
		}
	}
}
