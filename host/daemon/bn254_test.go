package daemon

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestBN254Jobs: a BN254 key set (a gnark circuit imported as a user imports it)
// is proved through the daemon and a CPU backend process (full partitions: the host
// evaluates A and B), from gnark witnesses and from wire assignments, full and
// compact, and gnark's BN254 verifier accepts every proof against the public values
// of its partition's input. A compact assignment that says it holds BLS12-381
// scalars is refused at submit, naming both curves.
func TestBN254Jobs(t *testing.T) {
	const steps = 200
	stateDir := apitest.ShortTempDir(t)
	ctx := testCtx(t, 2*time.Minute)
	field := ecc.BN254.ScalarField()
	gf, err := testcircuit.WriteGnarkFilesOn(ecc.BN254, t.TempDir(), "chain", &testcircuit.Chain{N: steps},
		testcircuit.ChainAssignmentOver(field, steps, 3, 5))
	if err != nil {
		t.Fatal(err)
	}
	res, err := circuit.Import(ctx, circuit.ImportFiles{CCS: gf.CCS, PK: gf.PK, VK: gf.VK}, "chain-bn254", filepath.Join(stateDir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Circuit
	defer c.Close()

	// Two partitions of different inputs, as witnesses and as wire assignments.
	var witnesses, assignments, publics [][]byte
	for x := range uint64(2) {
		full, err := witness.New(field)
		if err != nil {
			t.Fatal(err)
		}
		if err := full.Fill(2, 1, chainValues(steps, 3+x, 5)); err != nil {
			t.Fatal(err)
		}
		w, err := full.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		solved, err := gf.R1CS.Solve(full)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := full.Public()
		if err != nil {
			t.Fatal(err)
		}
		pb, err := pub.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		witnesses = append(witnesses, w)
		assignments = append(assignments, circuit.MarshalAssignment(solved.(*cs_bn254.R1CSSolution).W, c.NbPublic, c.NbSecret))
		publics = append(publics, pb)
	}

	f := start(t, opts{stateDir: stateDir, noCircuits: true})
	compact := compactAssignments(t, c, assignments)
	// BN254's is written as version 3, whose header names the curve: one
	// that names BLS12-381 instead is refused.
	otherCurve := bytes.Clone(compact[0])
	binary.BigEndian.PutUint32(otherCurve[24:], keyfile.CurveBLS12381)
	_, err = f.c.Submit(ctx, api.SubmitRequest{Circuit: "chain-bn254", Assignments: [][]byte{otherCurve}})
	checkErr(t, err, api.ErrInvalidArgument, "wire assignment 0", "is a compact wire assignment of BLS12-381 scalars, circuit chain-bn254 is BN254")
	for _, req := range []api.SubmitRequest{
		{Circuit: "chain-bn254", Witnesses: witnesses},
		{Circuit: "chain-bn254", Assignments: assignments},
		{Circuit: "chain-bn254", Assignments: compact},
	} {
		job, err := f.c.Submit(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		done := f.await(ctx, job.ID)
		if done.State != api.JobDone || len(done.Partitions) != 2 {
			t.Fatalf("job %s with %d partitions: %s", done.State, len(done.Partitions), done.Error)
		}
		for _, p := range done.Partitions {
			if !bytes.Equal(p.PublicWitness, publics[p.Index]) {
				t.Fatalf("partition %d: its public witness is not its input's", p.Index)
			}
			proof := groth16.NewProof(ecc.BN254)
			if _, err := proof.ReadFrom(bytes.NewReader(p.Proof)); err != nil {
				t.Fatalf("partition %d: %v", p.Index, err)
			}
			pub, err := witness.New(field)
			if err != nil {
				t.Fatal(err)
			}
			if err := pub.UnmarshalBinary(p.PublicWitness); err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, c.VK, pub); err != nil {
				t.Fatalf("partition %d: gnark refused the proof: %v", p.Index, err)
			}
		}
	}
}

// chainValues is a BN254 chain's public input x and output and its secret s, in
// the order a witness is filled.
func chainValues(steps int, x, s uint64) chan any {
	a := testcircuit.ChainAssignmentOver(ecc.BN254.ScalarField(), steps, x, s)
	values := make(chan any, 3)
	values <- a.X
	values <- a.Y
	values <- a.S
	close(values)
	return values
}
