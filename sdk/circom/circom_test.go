package circom

import (
	"bufio"
	"bytes"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381fr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// The test files, made by testdata/make.sh with circom2 and snarkjs, for each prime circom names.
var testCircuits = []string{"multiplier", "poseidonbits"}

var testPrimes = []struct {
	name  string // circom's --prime
	curve ecc.ID
	other string // the other prime, whose witness must be refused
}{
	{"bn128", ecc.BN254, "bls12381"},
	{"bls12381", ecc.BLS12_381, "bn128"},
}

func testdataPath(circuit, prime, ext string) string {
	return filepath.Join("testdata", circuit+"_"+prime+ext)
}

func mustReadR1CS(t testing.TB, circuit, prime string) *R1CS {
	t.Helper()
	cs, err := ReadR1CS(testdataPath(circuit, prime, ".r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func mustReadWitness(t testing.TB, circuit, prime string) *Witness {
	t.Helper()
	w, err := ReadWitness(testdataPath(circuit, prime, ".wtns"))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// snarkjsInfo reads what `snarkjs r1cs info` reported for a file: "# of Wires: 587" and the like,
// and "Curve: bn-128".
func snarkjsInfo(t *testing.T, circuit, prime string) map[string]string {
	t.Helper()
	f, err := os.Open(testdataPath(circuit, prime, ".info.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := regexp.MustCompile(`snarkJS: (?:# of )?([A-Za-z ]+): (\S+)`)
	info := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if m := line.FindStringSubmatch(scanner.Text()); m != nil {
			info[m[1]] = m[2]
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return info
}

func TestReadR1CSMatchesSnarkjs(t *testing.T) {
	snarkjsCurve := map[ecc.ID]string{ecc.BN254: "bn-128", ecc.BLS12_381: "bls12-381"}
	for _, circuit := range testCircuits {
		for _, prime := range testPrimes {
			t.Run(circuit+"_"+prime.name, func(t *testing.T) {
				cs := mustReadR1CS(t, circuit, prime.name)
				info := snarkjsInfo(t, circuit, prime.name)
				if cs.Curve != prime.curve || info["Curve"] != snarkjsCurve[cs.Curve] {
					t.Errorf("curve %s, want %s; snarkjs says %s", cs.Curve, prime.curve, info["Curve"])
				}
				if cs.Prime.Cmp(prime.curve.ScalarField()) != 0 {
					t.Errorf("prime %s", cs.Prime)
				}
				for name, got := range map[string]uint64{
					"Wires":          uint64(cs.NumWires),
					"Constraints":    uint64(len(cs.Constraints)),
					"Private Inputs": uint64(cs.NumPrivateInputs),
					"Public Inputs":  uint64(cs.NumPublicInputs),
					"Labels":         cs.NumLabels,
					"Outputs":        uint64(cs.NumPublicOutputs),
				} {
					want, err := strconv.ParseUint(info[name], 10, 64)
					if err != nil {
						t.Fatalf("snarkjs info has no %q: %v", name, info)
					}
					if got != want {
						t.Errorf("%s: %d, snarkjs says %d", name, got, want)
					}
				}
				if len(cs.WireToLabel) != int(cs.NumWires) {
					t.Errorf("%d wire labels for %d wires", len(cs.WireToLabel), cs.NumWires)
				}
			})
		}
	}
}

// The multiplier's one constraint, as circom writes c <== a*b with wires [1, c, a, b]:
// (-1·a) × (b) = (-1·c).
func TestReadR1CSMultiplierConstraint(t *testing.T) {
	for _, prime := range testPrimes {
		cs := mustReadR1CS(t, "multiplier", prime.name)
		minusOne := new(big.Int).Sub(cs.Prime, big.NewInt(1))
		want := Constraint{
			A: LinearCombination{{Wire: 2, Coefficient: FieldElement(littleEndian32(minusOne))}},
			B: LinearCombination{{Wire: 3, Coefficient: FieldElement(littleEndian32(big.NewInt(1)))}},
			C: LinearCombination{{Wire: 1, Coefficient: FieldElement(littleEndian32(minusOne))}},
		}
		if len(cs.Constraints) != 1 || !equalConstraint(cs.Constraints[0], want) {
			t.Errorf("%s: constraints %+v, want %+v", prime.name, cs.Constraints, want)
		}
		w := mustReadWitness(t, "multiplier", prime.name)
		for i, v := range []int64{1, 33, 3, 11} {
			if w.Values[i].BigInt().Int64() != v {
				t.Errorf("%s: wire %d is %s, want %d", prime.name, i, w.Values[i].BigInt(), v)
			}
		}
	}
}

func equalConstraint(x, y Constraint) bool {
	return slices.Equal(x.A, y.A) && slices.Equal(x.B, y.B) && slices.Equal(x.C, y.C)
}

// Re-encoding what was read gives back the file circom wrote, byte for byte: the reader kept
// everything, and the test encoder that builds the malformed files below writes real files.
func TestRoundTripRealFiles(t *testing.T) {
	for _, circuit := range testCircuits {
		for _, prime := range testPrimes {
			data, err := os.ReadFile(testdataPath(circuit, prime.name, ".r1cs"))
			if err != nil {
				t.Fatal(err)
			}
			if got := encodeR1CS(mustReadR1CS(t, circuit, prime.name)); !bytes.Equal(got, data) {
				t.Errorf("%s_%s.r1cs: re-encoded file differs", circuit, prime.name)
			}
			data, err = os.ReadFile(testdataPath(circuit, prime.name, ".wtns"))
			if err != nil {
				t.Fatal(err)
			}
			if got := encodeWitness(mustReadWitness(t, circuit, prime.name)); !bytes.Equal(got, data) {
				t.Errorf("%s_%s.wtns: re-encoded file differs", circuit, prime.name)
			}
		}
	}
}

// The documented way to get gnark-crypto elements from a FieldElement gives the same value as
// BigInt, for every coefficient of both fields.
func TestFieldElementToGnarkCrypto(t *testing.T) {
	for _, prime := range testPrimes {
		cs := mustReadR1CS(t, "poseidonbits", prime.name)
		for i, c := range cs.Constraints {
			for _, lc := range []LinearCombination{c.A, c.B, c.C} {
				for _, term := range lc {
					want := term.Coefficient.BigInt()
					var got big.Int
					var err error
					bytes := [FieldElementSize]byte(term.Coefficient)
					switch cs.Curve {
					case ecc.BN254:
						var e bn254fr.Element
						e, err = bn254fr.LittleEndian.Element(&bytes)
						e.BigInt(&got)
					case ecc.BLS12_381:
						var e bls12381fr.Element
						e, err = bls12381fr.LittleEndian.Element(&bytes)
						e.BigInt(&got)
					}
					if err != nil || got.Cmp(want) != 0 {
						t.Fatalf("%s constraint %d: fr element %s (%v), want %s", prime.name, i, &got, err, want)
					}
				}
			}
		}
	}
}

func TestCheckAcceptsWitnessSnarkjsAccepted(t *testing.T) {
	for _, circuit := range testCircuits {
		for _, prime := range testPrimes {
			cs := mustReadR1CS(t, circuit, prime.name)
			w := mustReadWitness(t, circuit, prime.name)
			if w.Curve != prime.curve || w.Prime.Cmp(cs.Prime) != 0 {
				t.Errorf("%s_%s.wtns: curve %s, prime %s", circuit, prime.name, w.Curve, w.Prime)
			}
			if err := cs.Check(w); err != nil {
				t.Errorf("%s_%s: %v", circuit, prime.name, err)
			}
		}
	}
}

// firstConstraintUsing is the first constraint whose A, B or C has a term on wire, or -1.
func firstConstraintUsing(cs *R1CS, wire uint32) int {
	for i, c := range cs.Constraints {
		for _, lc := range []LinearCombination{c.A, c.B, c.C} {
			for _, term := range lc {
				if term.Wire == wire {
					return i
				}
			}
		}
	}
	return -1
}

// Changing one wire's value breaks the first constraint that uses the wire, and none before it:
// Check must name exactly that one. The change adds 7, not 1: adding 1 to a bit that is 0 makes
// another bit, which Num2Bits's constraint b·(b-1) = 0 accepts.
func TestCheckNamesFirstUnsatisfiedConstraint(t *testing.T) {
	for _, prime := range testPrimes {
		cs := mustReadR1CS(t, "poseidonbits", prime.name)
		tested := 0
		for wire := uint32(1); wire < cs.NumWires; wire += 23 {
			want := firstConstraintUsing(cs, wire)
			if want < 0 {
				continue // a wire no constraint uses cannot be caught by any check
			}
			w := mustReadWitness(t, "poseidonbits", prime.name)
			v := w.Values[wire].BigInt()
			v.Add(v, big.NewInt(7)).Mod(v, cs.Prime)
			w.Values[wire] = FieldElement(littleEndian32(v))

			err := cs.Check(w)
			var unsatisfied *UnsatisfiedError
			if !errors.As(err, &unsatisfied) || !errors.Is(err, ErrUnsatisfied) {
				t.Fatalf("%s: wire %d changed: Check = %v, want an *UnsatisfiedError", prime.name, wire, err)
			}
			if unsatisfied.Constraint != want {
				t.Errorf("%s: wire %d changed: Check names constraint %d, want %d (%v)", prime.name, wire, unsatisfied.Constraint, want, err)
			}
			tested++
		}
		if tested < 10 {
			t.Errorf("%s: only %d wires tested", prime.name, tested)
		}
	}
}

func TestCheckRefusesMismatchedWitness(t *testing.T) {
	for _, prime := range testPrimes {
		cs := mustReadR1CS(t, "multiplier", prime.name)
		otherPrime := mustReadWitness(t, "multiplier", prime.other)
		fewer := mustReadWitness(t, "multiplier", prime.name)
		fewer.Values = fewer.Values[:len(fewer.Values)-1]
		more := mustReadWitness(t, "multiplier", prime.name)
		more.Values = append(more.Values, FieldElement{})
		empty := mustReadWitness(t, "multiplier", prime.name)
		empty.Values = nil
		cs0 := *cs
		cs0.NumWires = 0 // a hand-built r1cs, so that an empty witness reaches the wire 0 check
		wireZero := mustReadWitness(t, "multiplier", prime.name)
		wireZero.Values[0] = FieldElement(littleEndian32(big.NewInt(2)))
		notCanonical := mustReadWitness(t, "multiplier", prime.name)
		notCanonical.Values[2] = FieldElement(littleEndian32(cs.Prime))

		for _, c := range []struct {
			name string
			cs   *R1CS
			w    *Witness
			want error
		}{
			{"witness of the other prime", cs, otherPrime, ErrWitnessMismatch},
			{"one value too few", cs, fewer, ErrWitnessMismatch},
			{"one value too many", cs, more, ErrWitnessMismatch},
			{"no values", &cs0, empty, ErrWitnessMismatch},
			{"wire 0 not 1", cs, wireZero, ErrWitnessMismatch},
			{"value not below the prime", cs, notCanonical, ErrNotCanonical},
		} {
			if err := c.cs.Check(c.w); !errors.Is(err, c.want) {
				t.Errorf("%s: %s: Check = %v, want %v", prime.name, c.name, err, c.want)
			}
		}
	}
}

// A hand-built R1CS whose wire is out of range gets an error from Check, not a panic.
func TestCheckHandBuiltWireOutOfRange(t *testing.T) {
	cs := mustReadR1CS(t, "multiplier", "bn128")
	w := mustReadWitness(t, "multiplier", "bn128")
	cs.Constraints[0].B[0].Wire = 99
	if err := cs.Check(w); !errors.Is(err, ErrWireIndex) {
		t.Errorf("Check = %v, want %v", err, ErrWireIndex)
	}
}
