package curve

import (
	"bytes"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// TestFacts: the ids, names and two-adicities the rest of zkhost reads from here.
func TestFacts(t *testing.T) {
	if IDOf[bls12381.G1Affine]() != ecc.BLS12_381 || IDOf[bn254.G1Affine]() != ecc.BN254 || IDOf[int]() != ecc.UNKNOWN {
		t.Error("IDOf")
	}
	if ScalarIDOf[blsfr.Element]() != ecc.BLS12_381 || ScalarIDOf[bnfr.Element]() != ecc.BN254 || ScalarIDOf[[4]uint64]() != ecc.UNKNOWN {
		t.Error("ScalarIDOf")
	}
	for _, c := range []struct {
		id    ecc.ID
		name  string
		adic  int
		bound ecc.ID
	}{
		{ecc.BLS12_381, "bls12-381", 32, BLS12381{}.ID()},
		{ecc.BN254, "bn254", 28, BN254{}.ID()},
	} {
		if Name(c.id) != c.name || TwoAdicity(c.id) != c.adic || c.bound != c.id {
			t.Errorf("%s: name %q, two-adicity %d, binding's id %s", c.id, Name(c.id), TwoAdicity(c.id), c.bound)
		}
	}
}

// TestBindings runs each binding's operations against a plain computation on its
// curve: a multi-scalar multiplication against the sum of scalar multiplications,
// the FFT round trip on the domain and on its coset, and the affine conversions.
func TestBindings(t *testing.T) {
	t.Run("bls12-381", func(t *testing.T) {
		_, _, g1, g2 := bls12381.Generators()
		checkBinding[blsfr.Element](t, BLS12381{}, g1, g2)
	})
	t.Run("bn254", func(t *testing.T) {
		_, _, g1, g2 := bn254.Generators()
		checkBinding[bnfr.Element](t, BN254{}, g1, g2)
	})
}

func checkBinding[S any, PS Scalar[S], G1, G1J, G2, G2J any](t *testing.T, c Curve[S, G1, G1J, G2, G2J], g1 G1, g2 G2) {
	const n = 8
	scalars := make([]S, n)
	g1s, g2s := make([]G1, n), make([]G2, n)
	want1, want2 := c.G1Infinity(), c.G2Infinity()
	base1, base2 := c.G1FromAffine(&g1), c.G2FromAffine(&g2)
	for i := range scalars {
		PS(&scalars[i]).SetUint64(uint64(3*i + 1))
		p := c.G1ScalarMul(&base1, big.NewInt(int64(i+2)))
		g1s[i] = c.G1ToAffine(&p)
		q := c.G2ScalarMul(&base2, big.NewInt(int64(i+2)))
		g2s[i] = c.G2ToAffine(&q)
		k := big.NewInt(int64((3*i + 1) * (i + 2)))
		p = c.G1ScalarMul(&base1, k)
		c.G1Add(&want1, &p)
		q = c.G2ScalarMul(&base2, k)
		c.G2Add(&want2, &q)
	}
	got1, err := c.G1MultiExp(g1s, scalars, 2)
	if err != nil {
		t.Fatal(err)
	}
	got2, err := c.G2MultiExp(g2s, scalars, 2)
	if err != nil {
		t.Fatal(err)
	}
	a1, b1 := c.G1ToAffine(&got1), c.G1ToAffine(&want1)
	a2, b2 := c.G2ToAffine(&got2), c.G2ToAffine(&want2)
	if any(a1) != any(b1) || any(a2) != any(b2) {
		t.Error("MultiExp differs from the sum of scalar multiplications")
	}
	type member interface{ IsInSubGroup() bool }
	if !any(&a1).(member).IsInSubGroup() || !any(&a2).(member).IsInSubGroup() {
		t.Error("a sum of generators' multiples is not in the subgroup")
	}
	mixed := c.G1FromAffine(&g1)
	c.G1AddMixed(&mixed, &g1)
	double := c.G1ScalarMul(&base1, big.NewInt(2))
	if x, y := c.G1ToAffine(&mixed), c.G1ToAffine(&double); any(x) != any(y) {
		t.Error("G1AddMixed(g, g) is not 2g")
	}

	d := c.NewDomain(n, nil)
	if d.Size() != n || DomainBytes(d.Size()) != 4*n*32 {
		t.Fatalf("domain size %d, bytes %d", d.Size(), DomainBytes(d.Size()))
	}
	w := d.Generator()
	var one, wn S
	PS(&one).SetOne()
	PS(&wn).Exp(w, big.NewInt(n))
	if !PS(&wn).IsOne() {
		t.Error("the generator is not an n-th root of unity")
	}
	for _, coset := range []bool{false, true} {
		v := append([]S(nil), scalars...)
		Inverse(d, v, coset, 2)
		Forward(d, v, coset, 2)
		for i := range v {
			if !PS(&v[i]).Equal(&scalars[i]) {
				t.Fatalf("coset %v: Forward(Inverse(v)) differs at %d", coset, i)
			}
		}
	}
	var shift S
	PS(&shift).SetUint64(5)
	if s := c.NewDomain(n, &shift).Shift(); !PS(&s).Equal(&shift) {
		t.Error("NewDomain ignored the shift")
	}
}

// TestBN254IsGenerated: bn254.go is what gen.sh makes of bls12381.go, so a change to
// the BLS12-381 binding reaches BN254's only through go generate.
func TestBN254IsGenerated(t *testing.T) {
	gofmt := filepath.Join(runtime.GOROOT(), "bin", "gofmt")
	out := filepath.Join(t.TempDir(), "bn254.go")
	cmd := exec.Command("sh", "gen.sh")
	cmd.Env = append(os.Environ(), "OUT="+out, "PATH="+filepath.Dir(gofmt)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("bn254.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("bn254.go differs from gen.sh's output: run go generate ./curve")
	}
}
