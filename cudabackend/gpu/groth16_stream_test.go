//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestGroth16Streamed proves one partition of a chain circuit with its key
// resident and with its key streamed from host memory in chunks (one size
// that divides no set evenly, one larger than every set), and checks that the
// streamed MSM sums equal the resident ones and gnark-crypto's MultiExp, and
// that the streamed proof verifies with gnark's groth16.Verify.
func TestGroth16Streamed(t *testing.T) {
	needDevice(t)
	const steps = 1 << 12
	ccs, vk, pk := setupKey(t, &testcircuit.Chain{N: steps})
	public, sol := solveFor(t, ccs, testcircuit.ChainAssignment(steps, 7, 11))

	prove := func(chunk uint64) (refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac], KeyInfo) {
		t.Helper()
		key, err := LoadGroth16Key(0, pk, chunk)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		defer key.Free()
		slot, err := key.NewSlot()
		if err != nil {
			t.Fatal(err)
		}
		defer slot.Free()
		if err := slot.Stage(sol.W, sol.A, sol.B, 2); err != nil {
			t.Fatal(err)
		}
		res, _, err := key.Prove(slot, len(sol.A))
		if err != nil {
			t.Fatalf("chunk %d: prove: %v", chunk, err)
		}
		return res, key.Info()
	}
	resident, info := prove(0)
	if info.Chunk != 0 || info.Partials != [5]int{1, 1, 1, 1, 1} {
		t.Errorf("resident key info %+v", info)
	}

	wantAr := gnarkAr(t, pk, sol.W)

	// Two backends of a machine map the same key file: each registers its own
	// mapping of the same page-cache pages in place (no pinned copy), where the
	// device reads read-only registered memory; else each copies.
	t.Run("file mapped twice", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "chain.pk")
		if _, err := keyfile.Write(path, pk); err != nil {
			t.Fatal(err)
		}
		var keys [2]*Groth16Key
		for i := range keys {
			f, err := keyfile.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			mapped, err := f.BLS12381()
			if err != nil {
				t.Fatal(err)
			}
			if keys[i], err = LoadGroth16Key(0, mapped, 1<<11); err != nil {
				t.Fatal(err)
			}
			defer keys[i].Free()
		}
		points := uint64(len(pk.G1A)+len(pk.G1B)+len(pk.G1K)+len(pk.G1Z))*96 + uint64(len(pk.G2B))*192
		inPlace := HostRegisterReadOnly(0)
		t.Logf("device reads read-only registered host memory: %v", inPlace)
		for i, k := range keys {
			info := k.Info()
			if inPlace && (info.Registered != 5 || info.PinnedCopyBytes != 0) {
				t.Errorf("mapping %d: %d ranges registered, %d bytes copied; want the 5 point sets registered in place", i, info.Registered, info.PinnedCopyBytes)
			}
			if !inPlace && info.PinnedCopyBytes != points {
				t.Errorf("mapping %d: %d bytes copied into pinned memory, want the points' %d", i, info.PinnedCopyBytes, points)
			}
		}
		slot, err := keys[1].NewSlot()
		if err != nil {
			t.Fatal(err)
		}
		defer slot.Free()
		if err := slot.Stage(sol.W, sol.A, sol.B, 2); err != nil {
			t.Fatal(err)
		}
		res, _, err := keys[1].Prove(slot, len(sol.A))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Ar.Equal(&resident.Ar) || !res.Krs2.Equal(&resident.Krs2) || !res.Bs2.Equal(&resident.Bs2) {
			t.Errorf("sums from the registered file mapping differ from the resident key's")
		}
	})

	for _, chunk := range []uint64{1000, 1 << 14} {
		t.Run(fmt.Sprintf("chunk%d", chunk), func(t *testing.T) {
			streamed, info := prove(chunk)
			if info.Chunk != chunk {
				t.Errorf("info.Chunk %d, want %d", info.Chunk, chunk)
			}
			nA := int((uint64(len(pk.G1A)) + chunk - 1) / chunk)
			if info.Partials[0] != nA {
				t.Errorf("A in %d chunks, want %d", info.Partials[0], nA)
			}
			t.Logf("chunk %d: partials %v, %d host ranges registered in place, %d bytes copied into pinned memory",
				chunk, info.Partials, info.Registered, info.PinnedCopyBytes)
			checkAgainstResident(t, "streamed", streamed, resident, wantAr, pk, vk, public)
		})
	}
}

// TestGroth16Lean proves partitions of a chain circuit with its points and its
// proofs both streamed (a lean plan: nothing of a partition on the device but
// the block being worked on, H out of core), in chunks that divide no set
// evenly and in one chunk, H in the smallest blocks and in whole-domain ones,
// and checks the sums against the resident key's and gnark-crypto's
// MultiExp, the proof with gnark's groth16.Verify, the slot's device memory
// against LeanSlotDeviceBytes, and that a second proof in the same slot (its
// staging holding the first one's H) gives the same sums. Such a key refuses a
// constraint system.
func TestGroth16Lean(t *testing.T) {
	needDevice(t)
	const steps = 1 << 12
	ccs, vk, pk := setupKey(t, &testcircuit.Chain{N: steps})
	public, sol := solveFor(t, ccs, testcircuit.ChainAssignment(steps, 7, 11))
	shape := ShapeOf(pk)
	if uint64(len(sol.A)) == pk.DomainSize {
		t.Fatalf("the partition fills its domain: the zero padding goes untested")
	}

	prove := func(plan DevicePlan) (refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac], KeyInfo, *Groth16Slot, *Groth16Key) {
		t.Helper()
		key, err := LoadGroth16KeyPlan(0, pk, plan, ProveOptions{})
		if err != nil {
			t.Fatalf("%v: %v", plan, err)
		}
		t.Cleanup(func() { key.Free() })
		slot, err := key.NewSlot()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { slot.Free() })
		if err := slot.Stage(sol.W, sol.A, sol.B, 2); err != nil {
			t.Fatal(err)
		}
		res, _, err := key.Prove(slot, len(sol.A))
		if err != nil {
			t.Fatalf("%v: prove: %v", plan, err)
		}
		return res, key.Info(), slot, key
	}
	resident, _, _, _ := prove(DevicePlan{Slots: 1})
	wantAr := gnarkAr(t, pk, sol.W)
	for _, c := range []struct {
		chunk, block uint64
		maxC         int
	}{
		{1000, HStreamMinBlock(shape.LogN), 0},
		{1 << 14, pk.DomainSize, 0},
		{777, 2 * HStreamMinBlock(shape.LogN), 5}, // a window narrower than the plan's own
	} {
		t.Run(fmt.Sprintf("chunk%d-block%d-c%d", c.chunk, c.block, c.maxC), func(t *testing.T) {
			plan := LeanPlan(shape, c.chunk, c.block, c.maxC, 1, BoundResidency(0))
			lean, info, slot, key := prove(plan)
			if info.HBlock != c.block || info.Chunk != c.chunk || info.StreamC != c.maxC || info.Partials != [5]int{1, 1, 1, 1, 1} {
				t.Errorf("key info %+v, want chunk %d, H block %d, window cap %d, one sum a set", info, c.chunk, c.block, c.maxC)
			}
			if got, want := slot.DeviceBytes(), LeanSlotDeviceBytes(c.block); got != want {
				t.Errorf("slot device bytes %d, want %d", got, want)
			}
			if got, want := slot.HostBytes(), LeanSlotHostBytes(shape); got != want {
				t.Errorf("slot host bytes %d, want %d", got, want)
			}
			checkAgainstResident(t, "lean", lean, resident, wantAr, pk, vk, public)
			// Again in the same slot: staged anew over the first proof's H.
			if err := slot.Stage(sol.W, sol.A, sol.B, 2); err != nil {
				t.Fatal(err)
			}
			again, _, err := key.Prove(slot, len(sol.A))
			if err != nil {
				t.Fatal(err)
			}
			if !again.Krs2.Equal(&lean.Krs2) || !again.Ar.Equal(&lean.Ar) || !again.Bs2.Equal(&lean.Bs2) {
				t.Errorf("the second proof in the slot differs from the first")
			}
			m, err := keyconv.Constraints(ccs)
			if err != nil {
				t.Fatal(err)
			}
			if err := key.SetConstraints(m); !errors.Is(err, ErrInvalid) {
				t.Errorf("SetConstraints on a lean key: %v, want ErrInvalid", err)
			}
		})
	}
}

// gnarkAr is gnark-crypto's MSM of pk's A points over the wires of w whose A
// point is not infinity: the Ar a proof's device sums must match.
func gnarkAr(t *testing.T, pk *keyfile.BLS12381Key, w []fr.Element) bls12381.G1Jac {
	t.Helper()
	var wA []fr.Element
	for i, inf := range pk.InfinityA {
		if !inf {
			wA = append(wA, w[i])
		}
	}
	var ar bls12381.G1Jac
	if _, err := ar.MultiExp(pk.G1A, wA, ecc.MultiExpConfig{}); err != nil {
		t.Fatal(err)
	}
	return ar
}

// checkAgainstResident checks the sums of a proof made another way (what) against
// the resident key's and A's against gnark-crypto's MultiExp (wantAr), and the
// proof assembled from them with gnark's groth16.Verify.
func checkAgainstResident(t *testing.T, what string, got, resident refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac], wantAr bls12381.G1Jac,
	pk *keyfile.BLS12381Key, vk groth16.VerifyingKey, public witness.Witness) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want bls12381.G1Jac
	}{
		{"Ar", got.Ar, resident.Ar}, {"Bs1", got.Bs1, resident.Bs1},
		{"Krs", got.Krs, resident.Krs}, {"Krs2", got.Krs2, resident.Krs2},
		{"Ar (gnark-crypto)", got.Ar, wantAr},
	} {
		if !c.got.Equal(&c.want) {
			t.Errorf("%s: the %s sum differs", c.name, what)
		}
	}
	if !got.Bs2.Equal(&resident.Bs2) {
		t.Errorf("Bs2: the %s sum differs", what)
	}
	r, s, err := refprover.RandomRS[fr.Element]()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(keyconv.ProofToGnark(refprover.Assemble(curve.BLS12381{}, pk, got, r, s)), vk, public); err != nil {
		t.Errorf("groth16.Verify of the %s proof: %v", what, err)
	}
}

// syntheticKey is a key of the shape of chain 2^logN (one wire per
// constraint, every A and B point present) whose points are all the
// generators: the device memory a proof takes depends on the shape only.
func syntheticKey(logN int) *keyfile.BLS12381Key {
	n := uint64(1) << logN
	nwires := n + 3
	_, _, g1, g2 := bls12381.Generators()
	fill1 := func(k uint64) []bls12381.G1Affine {
		s := make([]bls12381.G1Affine, k)
		for i := range s {
			s[i] = g1
		}
		return s
	}
	g2b := make([]bls12381.G2Affine, nwires)
	for i := range g2b {
		g2b[i] = g2
	}
	return &keyfile.BLS12381Key{
		DomainSize: n, NbWires: nwires, NbPublic: 3,
		G1A: fill1(nwires), G1B: fill1(nwires), G1K: fill1(nwires - 3), G1Z: fill1(n - 1), G2B: g2b,
		InfinityA: make([]bool, nwires), InfinityB: make([]bool, nwires),
	}
}

// TestGroth16ProofDeviceMemory measures the device memory one proof's working
// allocations take (free device memory before and after the second proof, the
// MSM pool emptied before, and keeping what the proof took after) at chain 2^22 (or
// 2^ZK_MEMTEST_LOGN), resident, resident with precomputed copies of its
// points (as many as MSMMaxDepth allows), streamed, and lean (its proofs
// streamed too), and checks it against the admission estimate
// (ProofWorkBytesDepth, or LeanProofWorkBytes, with the device's residency):
// never below, at most 25% above. It also checks that what msm.cu reports for
// the key (KeyInfo.WorkG1 + WorkG2, with the radix sort's storage as CUB asks
// it) is the estimate: CUB never asks more than msm_plan.h's bound; and that
// the key holds the copies and the bytes KeyCopiesOf and KeyCopiesBytes say.
func TestGroth16ProofDeviceMemory(t *testing.T) {
	needDevice(t)
	logN := 22
	if v, err := strconv.Atoi(os.Getenv("ZK_MEMTEST_LOGN")); err == nil {
		logN = v
	}
	props, err := DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := DeviceResidency(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MSM residency: %+v", res)
	pk := syntheticKey(logN)
	shape := ShapeOf(pk)
	rng := rand.New(rand.NewPCG(1, 2))
	n := int(pk.DomainSize)
	w, a, b := randFr(rng, int(pk.NbWires)), randFr(rng, n), randFr(rng, n)
	for _, tc := range []struct{ chunk, depth, hBlock uint64 }{{0, 1, 0}, {0, MSMMaxDepth, 0}, {1 << (logN - 1), 1, 0}, {1 << (logN - 2), 0, 1 << (logN - 4)}} {
		chunk, depth, lean := tc.chunk, int(tc.depth), tc.hBlock > 0
		t.Run(fmt.Sprintf("chunk%d/depth%d/hblock%d", chunk, depth, tc.hBlock), func(t *testing.T) {
			key, err := LoadGroth16KeyPlan(0, pk, DevicePlan{Chunk: chunk, Depth: depth, HBlock: tc.hBlock}, ProveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer key.Free()
			if chunk == 0 {
				if got, want := key.Info().Copies, KeyCopiesOf(shape, depth); got != want {
					t.Errorf("the key keeps copies %v, KeyCopiesOf says %v", got, want)
				}
				if got, want := key.DeviceBytes(), KeyShapeDeviceBytes(shape)+KeyCopiesBytes(shape, depth); got != want {
					t.Errorf("the key holds %d bytes, KeyShapeDeviceBytes and KeyCopiesBytes say %d", got, want)
				}
			}
			slot, err := key.NewSlot()
			if err != nil {
				t.Fatal(err)
			}
			defer slot.Free()
			if err := slot.Stage(w, a, b, 4); err != nil {
				t.Fatal(err)
			}
			// A first proof, not measured: the first launch of a kernel may
			// reserve device memory of the context's own (local memory for
			// its threads) that no later proof takes again.
			if _, _, err := key.Prove(slot, n); err != nil {
				t.Fatal(err)
			}
			if err := TrimMSMPool(0); err != nil {
				t.Fatal(err)
			}
			before, err := DeviceInfo(0)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := key.Prove(slot, n); err != nil {
				t.Fatal(err)
			}
			after, err := DeviceInfo(0)
			if err != nil {
				t.Fatal(err)
			}
			measured := int64(before.FreeBytes) - int64(after.FreeBytes)
			estimate, bound := ProofWorkBytesDepth(shape, chunk, res, depth), ProofWorkBytesDepth(shape, chunk, BoundResidency(props.SMCount), depth)
			if lean {
				estimate, bound = LeanProofWorkBytes(shape, chunk, 0, res), LeanProofWorkBytes(shape, chunk, 0, BoundResidency(props.SMCount))
			}
			info := key.Info()
			exact := ProofPoolBytes(info.WorkG1, info.WorkG2)
			// Each stream's bytes as msm.cu sizes them against the
			// planner's bounds (both from groth16.h's zk_g16_proof_runs),
			// before the pool's blocks round them.
			if g1, g2 := proofStreamsWork(shape, chunk, lean, 0, res, depth); info.WorkG1 != g1 || info.WorkG2 != g2 {
				t.Errorf("msm.cu allocates %d (G1 stream) and %d (G2 stream) bytes per proof, the planner says %d and %d", info.WorkG1, info.WorkG2, g1, g2)
			}
			t.Logf("proof device memory at 2^%d, chunk %d, copies %v: measured %d MiB, msm.cu's sizes %d MiB (G1 %d, G2 %d), estimate %d MiB (%.3f of measured); key %d MiB",
				logN, chunk, info.Copies, measured>>20, exact>>20, info.WorkG1>>20, info.WorkG2>>20, estimate>>20,
				float64(estimate)/float64(measured), key.DeviceBytes()>>20)
			if exact != estimate {
				t.Errorf("msm.cu allocates %d bytes per proof, the estimate says %d (CUB's sort storage above msm_plan.h's bound?)", exact, estimate)
			}
			if bound < estimate {
				t.Errorf("the estimate with every SM full, %d, is below the device's %d", bound, estimate)
			}
			if measured <= 0 || uint64(measured) > estimate {
				t.Errorf("measured %d bytes, above the estimate %d", measured, estimate)
			}
			if float64(estimate) > 1.25*float64(measured) {
				t.Errorf("estimate %d is more than 25%% above the measured %d", estimate, measured)
			}
		})
	}
	if err := TrimMSMPool(0); err != nil {
		t.Fatal(err)
	}
}
