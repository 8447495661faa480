package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/sdk/circom/circomtest"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// circomTestdata is one of sdk/circom's test files, made with circom2 and snarkjs.
func circomTestdata(name string) string {
	return circomtest.Path(name)
}

// TestCircomWitnesses: a key set imported from circom's and snarkjs's files proves
// jobs of .wtns witnesses through the daemon, as full partitions and as compact ones
// (the backend then evaluates A and B from the circuit's constraints), every proof
// verified against the witness's public values; a .wtns that breaks a constraint
// fails its job naming the constraint, and one of another circuit or curve is
// refused at submit.
func TestCircomWitnesses(t *testing.T) {
	wtns, err := os.ReadFile(circomTestdata("poseidonbits_bls12381.wtns"))
	if err != nil {
		t.Fatal(err)
	}
	for _, compact := range []bool{false, true} {
		name := "full"
		if compact {
			name = "compact"
		}
		t.Run(name, func(t *testing.T) {
			stateDir := apitest.ShortTempDir(t)
			ctx := testCtx(t, 2*time.Minute)
			files := circuit.CircomFiles{R1CS: circomTestdata("poseidonbits_bls12381.r1cs"), ZKey: circomTestdata("poseidonbits_bls12381.zkey")}
			res, err := circuit.ImportCircom(ctx, files, "poseidon", filepath.Join(stateDir, "keys"))
			if err != nil {
				t.Fatal(err)
			}
			c := res.Circuit
			defer c.Close()
			f := start(t, opts{stateDir: stateDir, noCircuits: true, compactW: compact})

			job, err := f.c.Submit(ctx, api.SubmitRequest{Circuit: "poseidon", Assignments: [][]byte{wtns, wtns}})
			if err != nil {
				t.Fatal(err)
			}
			done := f.await(ctx, job.ID)
			if done.State != api.JobDone {
				t.Fatalf("job %s: %s", done.State, done.Error)
			}
			W, err := circuit.ParseAssignment(wtns, c, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range done.Partitions {
				verifyCircomProof(t, c, p, W[1:c.NbPublic])
			}

			// The last wire changed: a constraint breaks, and the job fails naming it.
			bad := slices.Clone(wtns)
			bad[len(bad)-32]++
			badW, err := circuit.ParseAssignment(bad, c, 1)
			if err != nil {
				t.Fatal(err)
			}
			_, _, evalErr := circuit.Evaluate(c, badW, 1)
			var ue *circuit.UnsatisfiedError
			if !errors.As(evalErr, &ue) {
				t.Fatalf("the changed witness evaluates: %v", evalErr)
			}
			job, err = f.c.Submit(ctx, api.SubmitRequest{Circuit: "poseidon", Assignments: [][]byte{bad}})
			if err != nil {
				t.Fatalf("a changed witness refused at submit (%v): its size is right, it must fail at synthesis", err)
			}
			failed := f.await(ctx, job.ID)
			// The host names it on a full partition, the backend on a compact one.
			want := regexp.MustCompile(fmt.Sprintf(`does not satisfy constraint %d\b`, ue.Constraint))
			if failed.State != api.JobFailed || !want.MatchString(failed.Error) {
				t.Fatalf("job with a changed witness: %s, %q; want failed naming constraint %d", failed.State, failed.Error, ue.Constraint)
			}

			for _, tc := range []struct {
				file string
				want string
			}{
				{"multiplier_bls12381.wtns", "4 wires"},
				{"poseidonbits_bn128.wtns", "BN254"},
			} {
				other, err := os.ReadFile(circomTestdata(tc.file))
				if err != nil {
					t.Fatal(err)
				}
				_, err = f.c.Submit(ctx, api.SubmitRequest{Circuit: "poseidon", Assignments: [][]byte{other}})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("submit of %s: %v, want a refusal saying %q", tc.file, err, tc.want)
				}
			}
		})
	}
}

// verifyCircomProof checks a partition's proof with the circuit's verifying key and
// that its public witness holds the witness's public values.
func verifyCircomProof(t *testing.T, c *circuit.Circuit, p api.Partition, public []fr.Element) {
	t.Helper()
	proof := groth16.NewProof(ecc.BLS12_381)
	if _, err := proof.ReadFrom(bytes.NewReader(p.Proof)); err != nil {
		t.Fatal(err)
	}
	pub, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.UnmarshalBinary(p.PublicWitness); err != nil {
		t.Fatal(err)
	}
	if got := pub.Vector().(fr.Vector); !slices.Equal(got, public) {
		t.Fatalf("partition %d: public values %v, the witness has %v", p.Index, got, public)
	}
	if err := groth16.Verify(proof, c.VK, pub); err != nil {
		t.Fatalf("partition %d: %v", p.Index, err)
	}
}
