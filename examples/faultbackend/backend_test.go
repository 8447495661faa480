package main

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// stub is an inner backend answering a fixed proof.
type stub struct {
	proof []byte
	calls int
}

func (s *stub) Describe(context.Context) (sdk.Description, error) {
	return sdk.Description{Name: "stub", APIVersions: []uint32{sdk.APIVersion}, MaxInFlight: 1, Curves: []sdk.Curve{sdk.CurveBLS12381},
		Device: sdk.DeviceInfo{Kind: "cpu", Model: "test", Available: true}}, nil
}
func (s *stub) LoadKey(context.Context, sdk.KeyRef) (sdk.KeyInfo, error) { return sdk.KeyInfo{}, nil }
func (s *stub) UnloadKey(context.Context, string) error                  { return nil }
func (s *stub) Prove(context.Context, sdk.ProveRequest) (sdk.ProveResult, error) {
	s.calls++
	return sdk.ProveResult{Proof: bytes.Clone(s.proof)}, nil
}

// realProof proves testcircuit.Square once and returns the encoded proof, its verifying key
// and public witness.
func realProof(t *testing.T) ([]byte, groth16.VerifyingKey, witness.Witness) {
	t.Helper()
	proof, vk, w := testcircuit.SquareProof(t)
	pub, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	return proof, vk, pub
}

func verifyWitness(proof []byte, vk groth16.VerifyingKey, pub witness.Witness) error {
	p := groth16.NewProof(ecc.BLS12_381)
	if _, err := p.ReadFrom(bytes.NewReader(proof)); err != nil {
		return err
	}
	return groth16.Verify(p, vk, pub)
}

func newTestBackend(t *testing.T, inner sdk.Backend, args ...string) *backend {
	t.Helper()
	o, err := parseOptions(args, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return newBackend(inner, o, 0, hclog.NewNullLogger())
}

func TestInvalidProofs(t *testing.T) {
	proof, vk, pub := realProof(t)
	if err := verifyWitness(proof, vk, pub); err != nil {
		t.Fatalf("the honest proof does not verify: %v", err)
	}
	for _, how := range []string{"negate", "garbage"} {
		t.Run(how, func(t *testing.T) {
			b := newTestBackend(t, &stub{proof: proof}, "-invalid-p=1", "-invalid-how="+how)
			res, err := b.Prove(context.Background(), sdk.ProveRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Proof) != len(proof) {
				t.Errorf("spoiled proof has %d bytes, the honest one %d", len(res.Proof), len(proof))
			}
			err = verifyWitness(res.Proof, vk, pub)
			if err == nil {
				t.Fatal("the spoiled proof verifies")
			}
			if how == "negate" {
				// Well formed: it decodes, and only verification refuses it.
				p := groth16.NewProof(ecc.BLS12_381)
				if _, derr := p.ReadFrom(bytes.NewReader(res.Proof)); derr != nil {
					t.Errorf("negated proof does not decode: %v", derr)
				}
			}
		})
	}
	// With probability 0 the proof passes through untouched.
	b := newTestBackend(t, &stub{proof: proof})
	res, err := b.Prove(context.Background(), sdk.ProveRequest{})
	if err != nil || !bytes.Equal(res.Proof, proof) {
		t.Fatalf("no fault: %v, proof changed %v", err, !bytes.Equal(res.Proof, proof))
	}
}

func TestDescribeClaims(t *testing.T) {
	b := newTestBackend(t, &stub{}, "-kind=cuda", "-api-version=99", "-max-in-flight-claim=0", "-curves=bn254, other")
	d, err := b.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Device.Kind != "cuda" || len(d.APIVersions) != 1 || d.APIVersions[0] != 99 || d.MaxInFlight != 0 || d.Name != "faultbackend" ||
		!slices.Equal(d.Curves, []sdk.Curve{sdk.CurveBN254, "other"}) {
		t.Errorf("description %+v", d)
	}
	if none, err := newTestBackend(t, &stub{}, "-curves=none").Describe(context.Background()); err != nil || len(none.Curves) != 0 {
		t.Errorf("-curves=none: %v, curves %v", err, none.Curves)
	}
	plain, err := newTestBackend(t, &stub{}).Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if plain.Device.Kind != "cpu" || plain.APIVersions[0] != sdk.APIVersion || plain.MaxInFlight != 1 || !slices.Equal(plain.Curves, []sdk.Curve{sdk.CurveBLS12381}) {
		t.Errorf("without claims the inner description must pass through: %+v", plain)
	}
}

func TestSlowHonoursCancel(t *testing.T) {
	inner := &stub{proof: []byte{1}}
	b := newTestBackend(t, inner, "-slow=10s")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.Prove(ctx, sdk.ProveRequest{})
	if sdk.KindOf(err) != sdk.ErrCanceled {
		t.Fatalf("error %v, want a canceled error", err)
	}
	if el := time.Since(start); el > 5*time.Second || inner.calls != 0 {
		t.Errorf("cancelled after %s with %d inner calls", el, inner.calls)
	}
}

func TestChanceIsSeeded(t *testing.T) {
	draw := func(seed string, run uint64) []bool {
		o, err := parseOptions([]string{"-seed=" + seed}, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		b := newBackend(&stub{}, o, run, hclog.NewNullLogger())
		out := make([]bool, 64)
		for i := range out {
			out[i] = b.chance(0.5)
		}
		return out
	}
	a, again, otherRun := draw("5", 1), draw("5", 1), draw("5", 2)
	if !equalBools(a, again) {
		t.Error("the same seed and run drew different choices")
	}
	if equalBools(a, otherRun) {
		t.Error("another run drew the same 64 choices")
	}
	b := newTestBackend(t, &stub{})
	for range 100 {
		if b.chance(0) || !b.chance(1) {
			t.Fatal("probability 0 fired or probability 1 did not")
		}
	}
}

func equalBools(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
