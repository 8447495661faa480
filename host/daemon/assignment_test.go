package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint/solver"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// assignmentsOf solves each gnark full witness of circuit c with gnark's solver and
// returns its wire assignment.
func assignmentsOf(t *testing.T, c *circuit.Circuit, ws [][]byte) [][]byte {
	t.Helper()
	out, err := c.GnarkAssignments(ws)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compactAssignments re-encodes wire assignments of c, of either curve, in the
// compact format.
func compactAssignments(t *testing.T, c *circuit.Circuit, as [][]byte) [][]byte {
	t.Helper()
	if c.Curve == sdk.CurveBN254 {
		return compactAssignmentsAs[bnfr.Element](t, c, as)
	}
	return compactAssignmentsAs[fr.Element](t, c, as)
}

// compactAssignmentsAs is compactAssignments on the scalars S of c's curve.
func compactAssignmentsAs[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, c *circuit.Circuit, as [][]byte) [][]byte {
	t.Helper()
	out := make([][]byte, len(as))
	words := sdk.CompactWords(uint64(c.NbWires))
	for i, a := range as {
		W, other, bits := make([]S, c.NbWires), make([]uint64, words), make([]uint64, words)
		_, n, err := circuit.SynthesizeInputCompact(c, a, 1, W, other, bits)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = circuit.MarshalCompactBits[S, PS](W, other, bits, n, c.NbPublic, c.NbSecret, 1); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestAssignments: jobs that carry wire assignments instead of witnesses, full or
// compact, prove and verify; a tampered assignment fails its job naming the first constraint it breaks,
// without reaching a device and without harming a job beside it; assignments of the
// wrong size or kind are refused at submit.
func TestAssignments(t *testing.T) {
	f := start(t, opts{circuits: []string{small, merkle}})
	ctx := testCtx(t, 2*time.Minute)
	c, err := circuit.Load(keysDir, small)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := circuit.Load(keysDir, merkle)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	ws := witnesses(t, small, 3, 41)
	as := assignmentsOf(t, c, ws)
	job, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: small, Assignments: as})
	if err != nil {
		t.Fatal(err)
	}
	verifyProofs(t, small, f.await(ctx, job.ID), ws)
	compact := compactAssignments(t, c, as)
	job, err = f.c.Submit(ctx, api.SubmitRequest{Circuit: small, Assignments: compact})
	if err != nil {
		t.Fatal(err)
	}
	verifyProofs(t, small, f.await(ctx, job.ID), ws)

	// Flip a bit of an internal wire; the constraint to be named is the first one
	// that breaks, as Evaluate finds it here.
	tampered := slices.Clone(as[1])
	wire := c.NbPublic + c.NbSecret + 7
	tampered[20+(wire+1)*fr.Bytes-1] ^= 1
	W, err := circuit.ParseAssignment(tampered, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ue *circuit.UnsatisfiedError
	if _, _, err := circuit.Evaluate(c, W, 1); !errors.As(err, &ue) {
		t.Fatalf("the tampered assignment evaluates: %v", err)
	}
	bad, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: small, Assignments: [][]byte{as[0], tampered}, Class: api.ClassHigh})
	if err != nil {
		t.Fatalf("a tampered assignment is refused at submit (%v): its sizes are right, it must fail at synthesis", err)
	}
	beside := f.submit(ctx, small, api.ClassNormal, ws[:2])
	final := f.await(ctx, bad.ID)
	if final.State != api.JobFailed {
		t.Fatalf("the job with a tampered assignment is %s, want failed", final.State)
	}
	for _, s := range []string{"partition 1", fmt.Sprintf("does not satisfy constraint %d:", ue.Constraint)} {
		if !strings.Contains(final.Error, s) {
			t.Errorf("job error %q does not say %q", final.Error, s)
		}
	}
	if p := final.Partitions[1]; p.State != api.PartitionFailed || p.Attempts != 0 {
		t.Errorf("partition 1: %s after %d device attempts, want failed without reaching a device", p.State, p.Attempts)
	}
	verifyProofs(t, small, f.await(ctx, beside.ID), ws[:2])

	merkleA := assignmentsOf(t, m, witnesses(t, merkle, 1, 42))[0]
	for _, tc := range []struct {
		name  string
		req   api.SubmitRequest
		wants []string
	}{
		{"truncated", api.SubmitRequest{Circuit: small, Assignments: [][]byte{as[0], as[1][:len(as[1])-1]}},
			[]string{"wire assignment 1", "truncated, or trailing bytes"}},
		{"of another circuit", api.SubmitRequest{Circuit: small, Assignments: [][]byte{merkleA}},
			[]string{"wire assignment 0", fmt.Sprintf("circuit %s has %d wires", small, c.NbWires)}},
		{"a witness as an assignment", api.SubmitRequest{Circuit: small, Assignments: ws[:1]},
			[]string{"wire assignment 0", "is not a wire assignment"}},
		{"an assignment as a witness", api.SubmitRequest{Circuit: small, Witnesses: as[:1]},
			[]string{"witness 0", "is a wire assignment, not a gnark witness"}},
		{"both", api.SubmitRequest{Circuit: small, Witnesses: ws[:1], Assignments: as[:1]},
			[]string{"one or the other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.c.Submit(ctx, tc.req)
			checkErr(t, err, api.ErrInvalidArgument, tc.wants...)
		})
	}
}

// TestHintedCircuit: a circuit whose custom hint zkhost does not have, imported for
// assignments only, is served: witnesses are refused at submit naming the hint, and
// wire assignments solved where the hint is prove to proofs gnark verifies with the
// user's verifying key.
func TestHintedCircuit(t *testing.T) {
	// Deliberately parallel to host/oneshot's TestAssignmentFiles setup (write
	// the cube circuit's gnark files, import them for assignments only): no
	// package both tests import can hold it, as sdk/testcircuit, which sdk/circuit's
	// own tests import, cannot call circuit.Import without an import cycle.
	f, err := testcircuit.WriteGnarkFiles(t.TempDir(), "cube", &testcircuit.CubeRoot{}, &testcircuit.CubeRoot{X: 13, Y: 2197})
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	res, err := circuit.Import(context.Background(), circuit.ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK, AssignmentsOnly: true}, "cube", keys)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Circuit
	defer c.Close()
	fx := start(t, opts{extra: fmt.Sprintf("[[circuit]]\nname = \"cube\"\nkeys = %q\n", keys)})
	ctx := testCtx(t, time.Minute)

	wb, err := os.ReadFile(f.Witness)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fx.c.Submit(ctx, api.SubmitRequest{Circuit: "cube", Witnesses: [][]byte{wb}})
	checkErr(t, err, api.ErrInvalidArgument, "testcircuit.CubeRootHint", "wire assignments")

	as, err := c.GnarkAssignments([][]byte{wb, wb}, solver.WithHints(testcircuit.CubeRootHint))
	if err != nil {
		t.Fatal(err)
	}
	job, err := fx.c.Submit(ctx, api.SubmitRequest{Circuit: "cube", Assignments: as})
	if err != nil {
		t.Fatal(err)
	}
	done := fx.await(ctx, job.ID)
	if done.State != api.JobDone {
		t.Fatalf("job %s (%s), want done", done.State, done.Error)
	}
	w, err := circuit.ParseWitness(wb, c)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := w.Public()
	for _, p := range done.Partitions {
		proof := groth16.NewProof(ecc.BLS12_381)
		if _, err := proof.ReadFrom(bytes.NewReader(p.Proof)); err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(proof, f.VerifyingKey, pub); err != nil {
			t.Errorf("partition %d: %v", p.Index, err)
		}
	}
}
