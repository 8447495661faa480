package solve

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	csolver "github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/std/math/bits"
	"github.com/consensys/gnark/std/math/cmp"
	"github.com/consensys/gnark/std/selector"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// lookup is circuits.Lookup over the curve these tests compile for.
func lookup(name string, params map[string]int) (circuits.Spec, error) {
	spec, err := circuits.Lookup(name, params)
	if err != nil {
		return spec, err
	}
	return spec.On(ecc.BLS12_381)
}

// compileCircuit compiles c for BLS12-381.
func compileCircuit(t testing.TB, c frontend.Circuit) *cs.R1CS {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, c)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return ccs.(*cs.R1CS)
}

// fullWitness returns assignment's full witness.
func fullWitness(t testing.TB, assignment frontend.Circuit) witness.Witness {
	t.Helper()
	w, err := frontend.NewWitness(assignment, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatalf("witness: %v", err)
	}
	return w
}

// both solves w with gnark and with the program, and fails the test unless
// they agree: both fail, or both give the same W, A and B word for word. It
// returns the two errors.
func both(t testing.TB, ccs *cs.R1CS, p *Program, w witness.Witness, opts ...csolver.Option) (gnarkErr, fastErr error) {
	t.Helper()
	var sol *cs.R1CSSolution
	func() {
		defer func() {
			if r := recover(); r != nil {
				gnarkErr = fmt.Errorf("gnark panicked: %v", r)
			}
		}()
		res, err := ccs.Solve(w, opts...)
		if err != nil {
			gnarkErr = err
			return
		}
		sol = res.(*cs.R1CSSolution)
	}()
	W := make([]fr.Element, p.NbWires())
	A := make([]fr.Element, p.NbConstraints())
	B := make([]fr.Element, p.NbConstraints())
	fastErr = p.Solve(w.Vector().(fr.Vector), W, A, B, opts...)
	if (gnarkErr == nil) != (fastErr == nil) {
		t.Fatalf("gnark: %v; fast solver: %v", gnarkErr, fastErr)
	}
	if gnarkErr != nil {
		return gnarkErr, fastErr
	}
	for _, v := range []struct {
		name      string
		got, want []fr.Element
	}{{"W", W, sol.W}, {"A", A, sol.A}, {"B", B, sol.B}} {
		if len(v.got) != len(v.want) {
			t.Fatalf("%s: %d values, gnark %d", v.name, len(v.got), len(v.want))
		}
		for i := range v.got {
			if v.got[i] != v.want[i] {
				t.Fatalf("%s[%d] = %s, gnark %s", v.name, i, v.got[i].String(), v.want[i].String())
			}
		}
	}
	// W alone (A and B nil, for a compact partition): the same W, and the
	// bitmaps sdk.PackBits makes of it.
	W2 := make([]fr.Element, p.NbWires())
	words := sdk.CompactWords(uint64(len(W2)))
	other, ones := make([]uint64, words), make([]uint64, words)
	nbOther, err := p.SolveCompact(w.Vector().(fr.Vector), W2, other, ones, opts...)
	if err != nil {
		t.Fatalf("W alone: %v", err)
	}
	for i := range W2 {
		if W2[i] != W[i] {
			t.Fatalf("W alone: W[%d] = %s, with A and B %s", i, W2[i].String(), W[i].String())
		}
	}
	wantOther, wantOnes := make([]uint64, words), make([]uint64, words)
	wantN, err := sdk.PackBitsOf(W, wantOther, wantOnes, 1)
	if err != nil {
		t.Fatal(err)
	}
	if nbOther != wantN || !slices.Equal(other, wantOther) || !slices.Equal(ones, wantOnes) {
		t.Fatalf("SolveCompact's bitmaps (%d other) differ from PackBits' of W (%d other)", nbOther, wantN)
	}
	return nil, nil
}

func TestMatchesGnarkOnExampleCircuits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]int
	}{
		{"chain", map[string]int{"k": 8}},
		{"merkle", map[string]int{"k": 3, "d": 5}},
		{"sha256", map[string]int{"b": 2}},
	} {
		spec, err := lookup(tc.name, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		ccs := compileCircuit(t, spec.Circuit())
		p, err := Compile(ccs)
		if err != nil {
			t.Fatalf("%s: %v", spec.ID(), err)
		}
		t.Logf("%s: %d instructions in %d levels, parallel share %.2f", spec.ID(), p.NbInstructions(), p.NbLevels(), p.ParallelShare())
		for part := 0; part < 2; part++ {
			w, err := spec.Witness(part, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, threads := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/p%d/threads%d", spec.ID(), part, threads), func(t *testing.T) {
					if err, _ := both(t, ccs, p, w, csolver.WithNbTasks(threads)); err != nil {
						t.Fatalf("valid witness refused: %v", err)
					}
				})
			}
		}
	}
}

// cube is a user's hint: x³ + 1.
func cube(q *big.Int, in, out []*big.Int) error {
	out[0].Exp(in[0], big.NewInt(3), q)
	out[0].Add(out[0], big.NewInt(1))
	out[0].Mod(out[0], q)
	return nil
}

// gadgets uses gnark's standard hints and gadgets, a user's hint, constants
// in every linear expression, divisions and a wide level.
type gadgets struct {
	X, Y  frontend.Variable
	Small [300]frontend.Variable
	Out   frontend.Variable `gnark:",public"`
}

func (c *gadgets) Define(api frontend.API) error {
	acc := frontend.Variable(0)
	for i := range c.Small {
		// A wide level of bit decompositions, their recomposition with
		// coefficients that are powers of two.
		b := bits.ToBinary(api, c.Small[i], bits.WithNbDigits(12))
		acc = api.Add(acc, bits.FromBinary(api, b), api.Mul(b[3], 5))
	}
	d := api.Div(c.X, api.Add(c.Y, 3))
	inv := api.Inverse(api.Add(c.Y, 1))
	z := api.IsZero(api.Sub(c.X, c.Y))
	s := selector.Mux(api, api.ToBinary(c.Small[0], 12)[0], c.X, c.Y)
	lt := cmp.IsLess(api, c.Small[1], c.Small[2])
	l2 := api.Lookup2(api.ToBinary(c.Small[3], 12)[0], api.ToBinary(c.Small[3], 12)[1], 11, 22, c.X, c.Y)
	h, err := api.Compiler().NewHint(cube, 1, c.X)
	if err != nil {
		return err
	}
	api.AssertIsEqual(h[0], api.Add(api.Mul(c.X, c.X, c.X), 1))
	api.AssertIsBoolean(z)
	sum := api.Add(acc, d, inv, z, s, lt, l2, h[0], api.Mul(api.Sub(7, c.X), api.Add(c.Y, -2)))
	api.AssertIsEqual(c.Out, sum)
	return nil
}

// gadgetsOut computes gadgets' public output natively.
func gadgetsOut(x, y int64, small [300]int64) fr.Element {
	el := func(v int64) fr.Element { var e fr.Element; e.SetInt64(v); return e }
	var sum fr.Element
	for _, s := range small {
		a, b := el(s), el(s>>3&1*5)
		sum.Add(&sum, &a)
		sum.Add(&sum, &b)
	}
	X, Y := el(x), el(y)
	var t, u fr.Element
	t.Add(&Y, ptr(el(3)))
	u.Div(&X, &t)
	sum.Add(&sum, &u)
	t.Add(&Y, ptr(el(1)))
	u.Inverse(&t)
	sum.Add(&sum, &u)
	if x == y {
		sum.Add(&sum, ptr(el(1)))
	}
	if small[0]&1 == 1 {
		sum.Add(&sum, &Y)
	} else {
		sum.Add(&sum, &X)
	}
	if small[1] < small[2] {
		sum.Add(&sum, ptr(el(1)))
	}
	switch small[3] & 3 {
	case 0:
		sum.Add(&sum, ptr(el(11)))
	case 1:
		sum.Add(&sum, ptr(el(22)))
	case 2:
		sum.Add(&sum, &X)
	case 3:
		sum.Add(&sum, &Y)
	}
	t.Mul(&X, &X)
	t.Mul(&t, &X)
	t.Add(&t, ptr(el(1)))
	sum.Add(&sum, &t)
	t.Sub(ptr(el(7)), &X)
	u.Add(&Y, ptr(el(-2)))
	t.Mul(&t, &u)
	sum.Add(&sum, &t)
	return sum
}

func ptr(e fr.Element) *fr.Element { return &e }

func gadgetsAssignment(x, y int64, small [300]int64, out fr.Element) *gadgets {
	a := &gadgets{X: x, Y: y, Out: out}
	for i := range small {
		a.Small[i] = small[i]
	}
	return a
}

func TestMatchesGnarkOnGadgetsAndHints(t *testing.T) {
	ccs := compileCircuit(t, &gadgets{})
	p, err := Compile(ccs)
	if err != nil {
		t.Fatal(err)
	}
	if p.NbLevels() >= p.NbInstructions() {
		t.Fatalf("%d levels for %d instructions: the test wants wide levels", p.NbLevels(), p.NbInstructions())
	}
	var small [300]int64
	for i := range small {
		small[i] = int64(i*2654435761) & 0xfff
	}
	hints := csolver.WithHints(cube)
	for _, tc := range []struct {
		name    string
		x, y    int64
		out     func() fr.Element
		wantErr bool
	}{
		{"valid", 5, 9, func() fr.Element { return gadgetsOut(5, 9, small) }, false},
		{"equal inputs", 4, 4, func() fr.Element { return gadgetsOut(4, 4, small) }, false},
		{"y+3 zero", 6, -3, func() fr.Element { var e fr.Element; return e }, true},
		{"wrong output", 5, 9, func() fr.Element { e := gadgetsOut(5, 9, small); e.Double(&e); return e }, true},
	} {
		for _, threads := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/threads%d", tc.name, threads), func(t *testing.T) {
				w := fullWitness(t, gadgetsAssignment(tc.x, tc.y, small, tc.out()))
				gerr, ferr := both(t, ccs, p, w, hints, csolver.WithNbTasks(threads))
				if (gerr != nil) != tc.wantErr {
					t.Fatalf("gnark: %v, want error %v", gerr, tc.wantErr)
				}
				if ferr != nil {
					// The same constraint is named as gnark's.
					var ue *UnsatisfiedError
					var ge *cs.UnsatisfiedConstraintError
					if errors.As(ferr, &ue) && errors.As(gerr, &ge) && ue.Constraint != ge.CID {
						t.Fatalf("fast solver names constraint %d, gnark %d", ue.Constraint, ge.CID)
					}
				}
			})
		}
	}

	// A value too wide for its decomposition fails in both.
	small[7] = 1 << 12
	w := fullWitness(t, gadgetsAssignment(5, 9, small, gadgetsOut(5, 9, small)))
	if gerr, _ := both(t, ccs, p, w, hints); gerr == nil {
		t.Fatal("a 13-bit value in a 12-bit decomposition was accepted")
	}

	// Without the user's hint both refuse to run.
	small[7] = 0
	w = fullWitness(t, gadgetsAssignment(5, 9, small, gadgetsOut(5, 9, small)))
	W := make([]fr.Element, p.NbWires())
	A := make([]fr.Element, p.NbConstraints())
	if err := p.Solve(w.Vector().(fr.Vector), W, A, A); err == nil {
		t.Fatal("solved without the circuit's own hint")
	}
}

func TestSolveRefusesWrongShapes(t *testing.T) {
	spec, err := lookup("chain", map[string]int{"k": 4})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(compileCircuit(t, spec.Circuit()))
	if err != nil {
		t.Fatal(err)
	}
	w, err := spec.Witness(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	v := w.Vector().(fr.Vector)
	W := make([]fr.Element, p.NbWires())
	A := make([]fr.Element, p.NbConstraints())
	B := make([]fr.Element, p.NbConstraints())
	if err := p.Solve(v[1:], W, A, B); err == nil {
		t.Error("a short witness was accepted")
	}
	if err := p.Solve(v, W[1:], A, B); err == nil {
		t.Error("a short W was accepted")
	}
	if err := p.Solve(v, W, A, B[1:]); err == nil {
		t.Error("a short B was accepted")
	}
}

func TestCompileRefusesCommitments(t *testing.T) {
	if _, err := Compile(compileCircuit(t, &testcircuit.Committed{})); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Compile of a circuit with a commitment: %v, want ErrUnsupported", err)
	}
}

// TestCompactIntoBothSolvers checks that CompactInto gives the same W and
// bitmaps from the program and from gnark's solver (no program), and that a
// witness that fails carries gnark's message either way.
func TestCompactIntoBothSolvers(t *testing.T) {
	spec, err := lookup("sha256", map[string]int{"b": 1})
	if err != nil {
		t.Fatal(err)
	}
	ccs := compileCircuit(t, spec.Circuit())
	p, err := Compile(ccs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := spec.Witness(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	words := sdk.CompactWords(uint64(p.NbWires()))
	type result struct {
		W           []fr.Element
		other, ones []uint64
		n           uint64
	}
	var got [2]result
	for i, prog := range []*Program{p, nil} {
		r := result{W: make([]fr.Element, p.NbWires()), other: make([]uint64, words), ones: make([]uint64, words)}
		if r.n, err = CompactInto(ccs, prog, w, r.W, r.other, r.ones, csolver.WithNbTasks(1)); err != nil {
			t.Fatalf("program %v: %v", prog != nil, err)
		}
		got[i] = r
	}
	if got[0].n != got[1].n || !slices.Equal(got[0].W, got[1].W) || !slices.Equal(got[0].other, got[1].other) || !slices.Equal(got[0].ones, got[1].ones) {
		t.Fatalf("the program's W and bitmaps (%d other) differ from gnark's (%d other)", got[0].n, got[1].n)
	}
	if got[0].n == 0 || got[0].n == uint64(p.NbWires()) {
		t.Fatalf("%d of %d wires other: not a bit-heavy witness", got[0].n, p.NbWires())
	}

	bad, err := spec.Witness(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	v := bad.Vector().(fr.Vector)
	v[len(v)-1].SetUint64(2) // another last message word: the public digest no longer matches
	for _, prog := range []*Program{p, nil} {
		r := result{W: make([]fr.Element, p.NbWires()), other: make([]uint64, words), ones: make([]uint64, words)}
		_, err := CompactInto(ccs, prog, bad, r.W, r.other, r.ones, csolver.WithNbTasks(1))
		if err == nil || !strings.Contains(err.Error(), "constraint") {
			t.Fatalf("program %v: an unsatisfied witness gave %v, want gnark's failure", prog != nil, err)
		}
	}
}
