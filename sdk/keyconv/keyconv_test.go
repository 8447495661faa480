package keyconv

import (
	"bytes"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/pedersen"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// squareChain is a small test circuit: Out = the n-th iterate of x -> x*x + C, plus a
// second private input Y that only enters through one product, so some wires have
// infinity A or B points.
type squareChain struct {
	X   frontend.Variable
	Y   frontend.Variable
	C   frontend.Variable `gnark:",public"`
	Out frontend.Variable `gnark:",public"`
	n   int
}

func (c *squareChain) Define(api frontend.API) error {
	x := c.X
	for range c.n {
		x = api.Add(api.Mul(x, x), c.C)
	}
	api.AssertIsEqual(api.Mul(x, c.Y), c.Out)
	return nil
}

type fixture struct {
	ccs constraint.ConstraintSystem
	pk  *groth16_bls12381.ProvingKey
	vk  groth16.VerifyingKey
}

var (
	fixtureOnce sync.Once
	fixtureVal  fixture
	fixtureErr  error
)

// testKey compiles the test circuit (about 2^8 constraints) and runs gnark's setup
// once for the whole package.
func testKey(t *testing.T) fixture {
	t.Helper()
	fixtureOnce.Do(func() {
		ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &squareChain{n: 250})
		if err != nil {
			fixtureErr = err
			return
		}
		pk, vk, err := groth16.Setup(ccs)
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureVal = fixture{ccs: ccs, pk: pk.(*groth16_bls12381.ProvingKey), vk: vk}
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureVal
}

// rawBytes serializes a gnark proving key without compression, for comparisons.
func rawBytes(t *testing.T, pk *groth16_bls12381.ProvingKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := pk.WriteRawTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// nativeOut computes the test circuit's public output outside the circuit.
func nativeOut(x, y, c uint64, n int) fr.Element {
	var vx, vy, vc fr.Element
	vx.SetUint64(x)
	vy.SetUint64(y)
	vc.SetUint64(c)
	for range n {
		vx.Square(&vx).Add(&vx, &vc)
	}
	return *vx.Mul(&vx, &vy)
}

// TestRoundTripThroughFile converts gnark's key, writes and opens it as a key file,
// converts it back, and proves with gnark's prover with the result.
func TestRoundTripThroughFile(t *testing.T) {
	fx := testKey(t)
	k, err := FromGnark(fx.pk)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(fx.ccs.GetNbPublicVariables()); k.NbPublic != want {
		t.Errorf("NbPublic %d, want %d", k.NbPublic, want)
	}
	path := filepath.Join(t.TempDir(), "test.pk")
	if _, err := keyfile.Write(path, k); err != nil {
		t.Fatal(err)
	}
	f, err := keyfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := ToGnark(f.Key())
	if !bytes.Equal(rawBytes(t, got), rawBytes(t, fx.pk)) {
		t.Fatal("ToGnark of the opened file differs from the original gnark key")
	}
	if got.NbInfinityA != fx.pk.NbInfinityA || got.NbInfinityB != fx.pk.NbInfinityB || got.NbInfinityA == 0 || got.NbInfinityB == 0 {
		t.Errorf("NbInfinity %d %d, want %d %d (not zero, so the masks are tested)", got.NbInfinityA, got.NbInfinityB, fx.pk.NbInfinityA, fx.pk.NbInfinityB)
	}

	assignment := &squareChain{X: 3, Y: 5, C: 7, Out: nativeOut(3, 5, 7, 250), n: 250}
	w, err := frontend.NewWitness(assignment, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(fx.ccs, got, w)
	if err != nil {
		t.Fatalf("prove: %v", err)
	}
	if err := groth16.Verify(proof, fx.vk, pub); err != nil {
		t.Fatalf("verify: %v", err)
	}

	// The proof through the SDK's type: the same bytes both ways, and it still verifies.
	gp := proof.(*groth16_bls12381.Proof)
	ours := &sdk.Proof{Ar: gp.Ar, Bs: gp.Bs, Krs: gp.Krs}
	var gnarkBytes, ourBytes bytes.Buffer
	if _, err := gp.WriteTo(&gnarkBytes); err != nil {
		t.Fatal(err)
	}
	n, err := ours.WriteTo(&ourBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ourBytes.Bytes(), gnarkBytes.Bytes()) || n != int64(ourBytes.Len()) {
		t.Fatalf("sdk.Proof's encoding (%d bytes, reported %d) differs from gnark's (%d bytes)", ourBytes.Len(), n, gnarkBytes.Len())
	}
	if err := groth16.Verify(ProofToGnark(ours), fx.vk, pub); err != nil {
		t.Fatalf("ProofToGnark: %v", err)
	}
}

// TestProofEncoding checks sdk.Proof's encoding against gnark's on proofs of random
// points, and that gnark reads it back as the same proof.
func TestProofEncoding(t *testing.T) {
	_, _, g1, g2 := bls12381.Generators()
	for i := range 8 {
		var a, b, c fr.Element
		a.SetRandom()
		b.SetRandom()
		c.SetRandom()
		if i == 0 {
			a.SetZero() // the point at infinity encodes too
		}
		var p sdk.Proof
		p.Ar.ScalarMultiplication(&g1, a.BigInt(new(big.Int)))
		p.Krs.ScalarMultiplication(&g1, b.BigInt(new(big.Int)))
		p.Bs.ScalarMultiplication(&g2, c.BigInt(new(big.Int)))
		ours, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := ProofToGnark(&p).WriteTo(&want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, want.Bytes()) {
			t.Fatalf("proof %d: encoding %x, gnark's %x", i, ours, want.Bytes())
		}
		var back groth16_bls12381.Proof
		if _, err := back.ReadFrom(bytes.NewReader(ours)); err != nil {
			t.Fatal(err)
		}
		if !back.Ar.Equal(&p.Ar) || !back.Bs.Equal(&p.Bs) || !back.Krs.Equal(&p.Krs) || len(back.Commitments) != 0 {
			t.Fatalf("proof %d: gnark read back %+v", i, back)
		}
	}
}

func TestConvert(t *testing.T) {
	fx := testKey(t)
	k, err := FromGnark(fx.pk)
	if err != nil {
		t.Fatal(err)
	}
	wantDigest, err := keyfile.Write(filepath.Join(t.TempDir(), "direct.pk"), k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"WriteTo", func(b *bytes.Buffer) error { _, err := fx.pk.WriteTo(b); return err }},
		{"WriteRawTo", func(b *bytes.Buffer) error { _, err := fx.pk.WriteRawTo(b); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(&buf); err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(dir, tc.name+".gnark")
			if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, tc.name+".pk")
			digest, err := Convert(in, out)
			if err != nil {
				t.Fatal(err)
			}
			if digest != wantDigest {
				t.Errorf("converted digest %x, direct Write gives %x", digest, wantDigest)
			}
			f, err := keyfile.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Verify(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rawBytes(t, ToGnark(f.Key())), rawBytes(t, fx.pk)) {
				t.Error("converted key differs from the original")
			}

			// A truncated gnark file and one with trailing bytes are refused.
			short := filepath.Join(dir, tc.name+".short")
			os.WriteFile(short, buf.Bytes()[:buf.Len()-10], 0o644)
			if _, err := Convert(short, filepath.Join(dir, "x.pk")); err == nil {
				t.Error("Convert accepted a truncated gnark key")
			}
			long := filepath.Join(dir, tc.name+".long")
			os.WriteFile(long, append(bytes.Clone(buf.Bytes()), 0), 0o644)
			if _, err := Convert(long, filepath.Join(dir, "x.pk")); err == nil || !strings.Contains(err.Error(), "trailing") {
				t.Errorf("Convert with trailing bytes: %v", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pk")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Convert left an output file: %v", err)
	}
	// Our own format is not a gnark key.
	if _, err := Convert(filepath.Join(dir, "WriteTo.pk"), filepath.Join(dir, "y.pk")); err == nil {
		t.Error("Convert accepted a zkhost key file as a gnark key")
	}
}

func TestFromGnarkRefusesCommitments(t *testing.T) {
	fx := testKey(t)
	pk := *fx.pk
	pk.CommitmentKeys = make([]pedersen.ProvingKey, 1)
	if _, err := FromGnark(&pk); !errors.Is(err, ErrCommitments) {
		t.Errorf("FromGnark of a key with commitments: %v, want ErrCommitments", err)
	}
	if _, err := FromGnark(nil); err == nil {
		t.Error("FromGnark(nil) succeeded")
	}
}
