package circuits

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/std/permutation/poseidon2"
	"github.com/consensys/gnark/test"
)

func compile(t *testing.T, s Spec) constraint.ConstraintSystem {
	t.Helper()
	ccs, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return ccs
}

func mustLookup(t *testing.T, name string, params map[string]int) Spec {
	t.Helper()
	s, err := Lookup(name, params)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLookupErrors(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]int
		want   string
	}{
		{"nosuch", nil, "unknown circuit \"nosuch\" (known: chain, merkle, sha256)"},
		{"chain", map[string]int{"depth": 3}, "chain has no parameter \"depth\" (its parameters: k)"},
		{"chain", map[string]int{"k": 0}, "parameter k = 0 is out of range 1..28"},
		{"merkle", map[string]int{"d": 63}, "parameter d = 63 is out of range 1..62"},
		{"merkle", map[string]int{"k": 0}, "parameter k = 0 is out of range"},
	}
	for _, tc := range cases {
		_, err := Lookup(tc.name, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Lookup(%q, %v) = %v, want an error containing %q", tc.name, tc.params, err, tc.want)
		}
	}
	if _, err := Describe("nosuch"); err == nil {
		t.Error("Describe of an unknown circuit succeeded")
	}
	d, err := Describe("merkle")
	if err != nil || !strings.Contains(d, "default 16") {
		t.Errorf("Describe(merkle) = %q, %v", d, err)
	}
}

func TestIDs(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]int
		id     string
	}{
		{"chain", nil, "chain-k10"},
		{"chain", map[string]int{"k": 16}, "chain-k16"},
		{"merkle", nil, "merkle-d16-k4"},
		{"merkle", map[string]int{"k": 8, "d": 20}, "merkle-d20-k8"},
	}
	for _, tc := range cases {
		s := mustLookup(t, tc.name, tc.params)
		if s.ID() != tc.id {
			t.Errorf("ID of %s %v = %q, want %q", tc.name, tc.params, s.ID(), tc.id)
		}
		back, err := FromID(tc.id)
		if err != nil {
			t.Errorf("FromID(%q): %v", tc.id, err)
			continue
		}
		if back.ID() != tc.id || back.Name != tc.name {
			t.Errorf("FromID(%q) gives %s %q", tc.id, back.Name, back.ID())
		}
	}
	for _, bad := range []string{"chain", "chain-k", "chain-k010", "merkle-k4", "merkle-k4-d16", "chain-k16-x1", "nosuch-k1", "chain-K16", ""} {
		if _, err := FromID(bad); err == nil {
			t.Errorf("FromID(%q) succeeded", bad)
		}
	}
}

// checkWitnesses checks that partitions 0..n-1 of s have valid witnesses, all different,
// and that witnesses are deterministic.
func checkWitnesses(t *testing.T, s Spec, n int) {
	t.Helper()
	ccs := compile(t, s)
	seen := make(map[string]int)
	for p := range n {
		w, err := s.Witness(p, 1)
		if err != nil {
			t.Fatalf("%s partition %d: %v", s.ID(), p, err)
		}
		if err := ccs.IsSolved(w); err != nil {
			t.Fatalf("%s partition %d: witness does not satisfy the circuit: %v", s.ID(), p, err)
		}
		b, err := w.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if q, dup := seen[string(b)]; dup {
			t.Errorf("%s: partitions %d and %d have the same witness", s.ID(), q, p)
		}
		seen[string(b)] = p

		again, err := s.Witness(p, 1)
		if err != nil {
			t.Fatal(err)
		}
		b2, _ := again.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Errorf("%s partition %d: witness is not deterministic", s.ID(), p)
		}
		other, err := s.Witness(p, 2)
		if err != nil {
			t.Fatal(err)
		}
		b3, _ := other.MarshalBinary()
		if bytes.Equal(b, b3) {
			t.Errorf("%s partition %d: seeds 1 and 2 give the same witness", s.ID(), p)
		}
	}
	if _, err := s.Witness(-1, 1); err == nil {
		t.Errorf("%s: negative partition accepted", s.ID())
	}
}

func TestChain(t *testing.T) {
	for _, k := range []int{1, 4, 8, 10} {
		s := mustLookup(t, "chain", map[string]int{"k": k})
		ccs := compile(t, s)
		if got := ccs.GetNbConstraints(); got != 1<<k {
			t.Errorf("chain k=%d has %d constraints, want %d", k, got, 1<<k)
		}
		if got := ccs.GetNbPublicVariables(); got != 2 {
			t.Errorf("chain k=%d has %d public variables, want 2 (one, Out)", k, got)
		}
	}
	checkWitnesses(t, mustLookup(t, "chain", map[string]int{"k": 8}), 4)

	// A wrong output does not satisfy the circuit.
	var x fr.Element
	x.SetUint64(3)
	bad := &Chain{X: x, Out: 5, Steps: 15}
	if err := test.IsSolved(&Chain{Steps: 15}, bad, Curve.ScalarField()); err == nil {
		t.Error("chain accepted a wrong output")
	}
	good := &Chain{X: x, Out: ChainOutput(x, 15), Steps: 15}
	if err := test.IsSolved(&Chain{Steps: 15}, good, Curve.ScalarField()); err != nil {
		t.Errorf("chain refused the native output: %v", err)
	}
}

// compressCircuit computes one Poseidon2 compression in-circuit and compares it with Out,
// computed natively.
type compressCircuit struct {
	L, R frontend.Variable
	Out  frontend.Variable `gnark:",public"`
}

func (c *compressCircuit) Define(api frontend.API) error {
	h, err := poseidon2.NewPoseidon2FromParameters(api, poseidonWidth, poseidonFullRounds, poseidonPartialRounds)
	if err != nil {
		return err
	}
	api.AssertIsEqual(h.Compress(c.L, c.R), c.Out)
	return nil
}

func TestPoseidon2NativeMatchesCircuit(t *testing.T) {
	h := NewHasher()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5 {
		l, r := randomElement(rng), randomElement(rng)
		if i == 0 {
			l.SetZero()
			r.SetZero()
		}
		out := h.Compress(l, r)
		a := &compressCircuit{L: l, R: r, Out: out}
		// The test engine runs the circuit on big integers, the R1CS solver on fr:
		// check both against the native hash.
		if err := test.IsSolved(&compressCircuit{}, a, Curve.ScalarField()); err != nil {
			t.Fatalf("in-circuit Poseidon2 differs from gnark-crypto's (test engine): %v", err)
		}
		ccs, err := frontend.Compile(Curve.ScalarField(), r1cs.NewBuilder, &compressCircuit{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := frontend.NewWitness(a, Curve.ScalarField())
		if err != nil {
			t.Fatal(err)
		}
		if err := ccs.IsSolved(w); err != nil {
			t.Fatalf("in-circuit Poseidon2 differs from gnark-crypto's (R1CS): %v", err)
		}
		// And a different output is refused, so the check above can fail.
		var one fr.Element
		one.SetOne()
		a.Out = *out.Add(&out, &one)
		if err := test.IsSolved(&compressCircuit{}, a, Curve.ScalarField()); err == nil {
			t.Fatal("Poseidon2 circuit accepted a wrong output")
		}
	}
	// Compress is not symmetric: the order of the children matters.
	var a, b fr.Element
	a.SetUint64(1)
	b.SetUint64(2)
	ab, ba := h.Compress(a, b), h.Compress(b, a)
	if ab.Equal(&ba) {
		t.Error("Compress(1, 2) == Compress(2, 1)")
	}
}

func TestMerkle(t *testing.T) {
	s := mustLookup(t, "merkle", map[string]int{"k": 2, "d": 6})
	checkWitnesses(t, s, 4)

	def := mustLookup(t, "merkle", nil)
	ccs := compile(t, def)
	t.Logf("%s: %d constraints, %d public, %d secret", def.ID(), ccs.GetNbConstraints(), ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables())
	if got, want := ccs.GetNbPublicVariables(), 1+1+4; got != want {
		t.Errorf("merkle default has %d public variables, want %d (one, root, 4 indices)", got, want)
	}
}

func TestMerkleRefusesBadWitnesses(t *testing.T) {
	const k, d = 3, 5
	circuit := NewMerkle(k, d)
	base, err := merkleAssignment(rand.New(rand.NewPCG(7, 7)), k, d, NewHasher())
	if err != nil {
		t.Fatal(err)
	}
	if err := test.IsSolved(circuit, base, Curve.ScalarField()); err != nil {
		t.Fatalf("valid merkle witness refused: %v", err)
	}
	clone := func() *Merkle {
		a := NewMerkle(k, d)
		a.Root = base.Root
		copy(a.Indices, base.Indices)
		copy(a.Leaves, base.Leaves)
		for i := range a.Paths {
			copy(a.Paths[i], base.Paths[i])
		}
		return a
	}
	var one fr.Element
	one.SetOne()
	bump := func(v frontend.Variable) fr.Element {
		e := v.(fr.Element)
		return *e.Add(&e, &one)
	}
	cases := map[string]func(a *Merkle){
		"wrong leaf":    func(a *Merkle) { a.Leaves[1] = bump(a.Leaves[1]) },
		"wrong sibling": func(a *Merkle) { a.Paths[2][3] = bump(a.Paths[2][3]) },
		"wrong root":    func(a *Merkle) { a.Root = bump(a.Root) },
		"wrong index":   func(a *Merkle) { a.Indices[0] = a.Indices[0].(uint64) ^ 1 },
		"index too big": func(a *Merkle) { a.Indices[0] = a.Indices[0].(uint64) + 1<<d },
	}
	for name, mutate := range cases {
		a := clone()
		mutate(a)
		if err := test.IsSolved(circuit, a, Curve.ScalarField()); err == nil {
			t.Errorf("%s: merkle accepted an invalid witness", name)
		}
	}
}

func TestSparseTree(t *testing.T) {
	h := NewHasher()
	rng := rand.New(rand.NewPCG(3, 4))
	// A full tree of depth 3 computed by hand agrees with the sparse tree holding all leaves.
	leaves := make([]fr.Element, 8)
	indices := make([]uint64, 8)
	for i := range leaves {
		leaves[i].SetUint64(uint64(100 + i))
		indices[i] = uint64(i)
	}
	tree, err := NewSparseTree(h, 3, indices, leaves, rng)
	if err != nil {
		t.Fatal(err)
	}
	level := leaves
	for len(level) > 1 {
		next := make([]fr.Element, len(level)/2)
		for i := range next {
			next[i] = h.Compress(level[2*i], level[2*i+1])
		}
		level = next
	}
	if root := tree.Root(); !root.Equal(&level[0]) {
		t.Error("sparse tree root differs from the full tree's")
	}
	if _, err := tree.Path(9); err == nil {
		t.Error("Path of an index outside the tree succeeded")
	}
	if _, err := NewSparseTree(h, 3, []uint64{8}, leaves[:1], rng); err == nil {
		t.Error("index 8 accepted in a depth-3 tree")
	}
	if _, err := NewSparseTree(h, 3, []uint64{1, 1}, leaves[:2], rng); err == nil {
		t.Error("two different leaves at one index accepted")
	}
	// A tree with more challenges than leaves repeats indices with the same leaf.
	a, err := merkleAssignment(rand.New(rand.NewPCG(5, 6)), 5, 2, NewHasher())
	if err != nil {
		t.Fatal(err)
	}
	if err := test.IsSolved(NewMerkle(5, 2), a, Curve.ScalarField()); err != nil {
		t.Errorf("merkle with repeated challenges: %v", err)
	}
}
