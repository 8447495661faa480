package circom

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
)

func mustReadZKey(t testing.TB, circuit, prime string) *ZKey {
	t.Helper()
	k, err := ReadZKey(testdataPath(circuit, prime, ".zkey"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// snarkjsVK is the part of `snarkjs zkey export verificationkey`'s JSON the tests compare with:
// affine coordinates in decimal, plain (not Montgomery) form.
type snarkjsVK struct {
	Protocol string     `json:"protocol"`
	Curve    string     `json:"curve"`
	NPublic  int        `json:"nPublic"`
	Alpha1   []string   `json:"vk_alpha_1"`
	Beta2    [][]string `json:"vk_beta_2"`
	Gamma2   [][]string `json:"vk_gamma_2"`
	Delta2   [][]string `json:"vk_delta_2"`
	IC       [][]string `json:"IC"`
}

// plainCoordinates decodes a point stored as snarkjs stores it (Montgomery, little-endian) into
// its coordinates in decimal, as snarkjs's JSON writes them: x·R⁻¹ mod q for each coordinate.
func plainCoordinates(k *ZKey, point []byte) []string {
	rInv := new(big.Int).Lsh(big.NewInt(1), uint(8*k.BaseFieldSize))
	rInv.ModInverse(rInv, k.BaseField)
	var out []string
	for off := 0; off < len(point); off += k.BaseFieldSize {
		v := littleEndianInt(point[off : off+k.BaseFieldSize])
		out = append(out, v.Mul(v, rInv).Mod(v, k.BaseField).String())
	}
	return out
}

// TestReadZKey reads the keys snarkjs made for the test circuits, checks them against their
// r1cs, and checks the reader's view of the encoding (Montgomery form, little-endian, the
// coefficients' extra factor) against the verifying key snarkjs exported in plain decimal.
func TestReadZKey(t *testing.T) {
	for _, circuit := range testCircuits {
		for _, prime := range testPrimes {
			t.Run(circuit+"_"+prime.name, func(t *testing.T) {
				k := mustReadZKey(t, circuit, prime.name)
				cs := mustReadR1CS(t, circuit, prime.name)
				if k.Curve != prime.curve {
					t.Fatalf("curve %s, want %s", k.Curve, prime.curve)
				}
				if err := k.CheckR1CS(cs); err != nil {
					t.Fatal(err)
				}
				if got, want := len(k.Coefficients), countTerms(cs)+cs.NumPublic()+1; got != want {
					t.Fatalf("%d coefficients, want %d", got, want)
				}

				raw, err := os.ReadFile(testdataPath(circuit, prime.name, ".vk.json"))
				if err != nil {
					t.Fatal(err)
				}
				var vk snarkjsVK
				if err := json.Unmarshal(raw, &vk); err != nil {
					t.Fatal(err)
				}
				if vk.NPublic != int(k.NumPublic) {
					t.Fatalf("vk.json has %d public values, the zkey %d", vk.NPublic, k.NumPublic)
				}
				// snarkjs's JSON writes affine points with z = 1 ("1", or ["1","0"] in G2).
				if got := plainCoordinates(k, k.Alpha1); !slices.Equal(got, vk.Alpha1[:2]) {
					t.Fatalf("alpha1 %v, vk.json %v", got, vk.Alpha1[:2])
				}
				for name, pair := range map[string]struct {
					point []byte
					json  [][]string
				}{"beta2": {k.Beta2, vk.Beta2}, "gamma2": {k.Gamma2, vk.Gamma2}, "delta2": {k.Delta2, vk.Delta2}} {
					want := append(append([]string{}, pair.json[0]...), pair.json[1]...)
					if got := plainCoordinates(k, pair.point); !slices.Equal(got, want) {
						t.Fatalf("%s %v, vk.json %v", name, got, want)
					}
				}
				for i := range vk.IC {
					if got := plainCoordinates(k, k.IC[i*k.G1Size:(i+1)*k.G1Size]); !slices.Equal(got, vk.IC[i][:2]) {
						t.Fatalf("IC %d: %v, vk.json %v", i, got, vk.IC[i][:2])
					}
				}
			})
		}
	}
}

func countTerms(cs *R1CS) int {
	n := 0
	for _, c := range cs.Constraints {
		n += len(c.A) + len(c.B)
	}
	return n
}

// TestZKeyCheckR1CSMismatch pairs keys with constraint systems they were not made for.
func TestZKeyCheckR1CSMismatch(t *testing.T) {
	poseidon := mustReadZKey(t, "poseidonbits", "bls12381")
	tampered := mustReadZKey(t, "poseidonbits", "bls12381")
	tampered.Coefficients[7].Value[0] ^= 1
	extra := mustReadZKey(t, "poseidonbits", "bls12381")
	extra.Coefficients = extra.Coefficients[:len(extra.Coefficients)-1]
	cases := []struct {
		name    string
		key     *ZKey
		cs      *R1CS
		mention string
	}{
		{"another circuit", poseidon, mustReadR1CS(t, "multiplier", "bls12381"), "wires"},
		{"another field", mustReadZKey(t, "poseidonbits", "bn128"), mustReadR1CS(t, "poseidonbits", "bls12381"), "field"},
		{"a changed coefficient", tampered, mustReadR1CS(t, "poseidonbits", "bls12381"), "coefficient 7"},
		{"a missing public row", extra, mustReadR1CS(t, "poseidonbits", "bls12381"), "public wire 4's row"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.key.CheckR1CS(c.cs)
			if !errors.Is(err, ErrKeyMismatch) {
				t.Fatalf("got %v, want ErrKeyMismatch", err)
			}
			if !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("%q does not mention %q", err, c.mention)
			}
		})
	}
}

// zkeyWithSection re-encodes the real multiplier zkey with one section's content changed.
func zkeyWithSection(t *testing.T, prime string, sectionType uint32, change func(content []byte) []byte) []byte {
	t.Helper()
	return zkeyWithSections(t, prime, sectionType, func(content []byte) [][]byte { return [][]byte{change(content)} })
}

// zkeyWithSections re-encodes the real multiplier zkey with one section replaced by what change
// returns: no section, the section changed, or several sections of its type.
func zkeyWithSections(t *testing.T, prime string, sectionType uint32, change func(content []byte) [][]byte) []byte {
	t.Helper()
	data, err := os.ReadFile(testdataPath("multiplier", prime, ".zkey"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseBinFile(data, "zkey", zkeyVersion)
	if err != nil {
		t.Fatal(err)
	}
	var sections []testSection
	for typ := uint32(1); typ <= zkeySectionContributions; typ++ {
		for _, content := range f.sections[typ] {
			contents := [][]byte{append([]byte{}, content...)}
			if typ == sectionType {
				contents = change(contents[0])
			}
			for _, c := range contents {
				sections = append(sections, testSection{typ, c})
			}
		}
	}
	return encodeBinFile("zkey", zkeyVersion, sections)
}

func TestParseZKeyMalformed(t *testing.T) {
	real, err := os.ReadFile(testdataPath("multiplier", "bls12381", ".zkey"))
	if err != nil {
		t.Fatal(err)
	}
	// Offsets in the BLS12-381 Groth16 header section: base field size and prime, scalar field
	// size and prime, then the counts and the points.
	const (
		hdrScalarSize = 4 + 48
		hdrNumVars    = hdrScalarSize + 4 + 32
		hdrNumPublic  = hdrNumVars + 4
		hdrDomain     = hdrNumPublic + 4
		hdrAlpha1     = hdrDomain + 4
	)
	setU32 := func(section uint32, off int, v uint32) []byte {
		return zkeyWithSection(t, "bls12381", section, func(c []byte) []byte {
			binary.LittleEndian.PutUint32(c[off:], v)
			return c
		})
	}
	// coefficient0 is the offset of the first coefficient's fields in the coefficients section.
	const coefficient0 = 4
	cases := []malformedCase{
		{"empty", nil, ErrTruncated, "file header"},
		{"r1cs magic", append([]byte("r1cs"), real[4:]...), ErrMagic, `"r1cs"`},
		{"cut short", real[:len(real)-10], ErrTruncated, "remain"},
		{"a PLONK key", setU32(zkeySectionHeader, 0, 2), ErrProtocol, "PLONK"},
		{"no H section", zkeyWithSections(t, "bls12381", zkeySectionH, func(c []byte) [][]byte { return nil }), ErrSections, "no H section"},
		{"two IC sections", zkeyWithSections(t, "bls12381", zkeySectionIC, func(c []byte) [][]byte { return [][]byte{c, c} }), ErrSections, "2 IC sections"},
		{"H one point short", zkeyWithSection(t, "bls12381", zkeySectionH, func(c []byte) []byte { return c[:len(c)-96] }), ErrSections, "H section"},
		{"B2 one byte long", zkeyWithSection(t, "bls12381", zkeySectionB2, func(c []byte) []byte { return append(c, 0) }), ErrSections, "B2 section"},
		{"base field size 40", setU32(zkeySectionGroth16, 0, 40), ErrFieldSize, "40 bytes"},
		{"scalar field size 48", setU32(zkeySectionGroth16, hdrScalarSize, 48), ErrFieldSize, "48 bytes"},
		{"more public values than wires", setU32(zkeySectionGroth16, hdrNumPublic, 4), ErrWireIndex, "public"},
		{"domain of 3", setU32(zkeySectionGroth16, hdrDomain, 3), ErrSections, "power of two"},
		{"a coordinate not below q", zkeyWithSection(t, "bls12381", zkeySectionGroth16, func(c []byte) []byte {
			for i := hdrAlpha1; i < hdrAlpha1+48; i++ {
				c[i] = 0xff
			}
			return c
		}), ErrNotCanonical, "alpha1"},
		{"an A point not below q", zkeyWithSection(t, "bls12381", zkeySectionA, func(c []byte) []byte {
			for i := 96 * 2; i < 96*2+48; i++ {
				c[i] = 0xff
			}
			return c
		}), ErrNotCanonical, "A section, point 2"},
		{"coefficient count too high", setU32(zkeySectionCoefficients, 0, 100), ErrSections, "100 coefficients"},
		{"coefficient of matrix C", setU32(zkeySectionCoefficients, coefficient0, 2), ErrSections, "matrix 2"},
		{"coefficient past the domain", setU32(zkeySectionCoefficients, coefficient0+4, 4), ErrSections, "row 4"},
		{"coefficient of wire 4", setU32(zkeySectionCoefficients, coefficient0+8, 4), ErrWireIndex, "wire 4"},
		{"coefficient not below r", zkeyWithSection(t, "bls12381", zkeySectionCoefficients, func(c []byte) []byte {
			for i := coefficient0 + 12; i < coefficient0+12+32; i++ {
				c[i] = 0xff
			}
			return c
		}), ErrNotCanonical, "zkey coefficient 0"},
	}
	// The re-encoder itself must give a key the reader accepts.
	if _, err := ParseZKey(zkeyWithSection(t, "bls12381", zkeySectionContributions, func(c []byte) []byte { return c })); err != nil {
		t.Fatalf("the real key re-encoded unchanged is refused: %v", err)
	}
	runMalformed(t, cases, ParseZKey)
}

// TestWitnessHeader: the header alone gives the curve and the count, and the files the tools
// wrote have the size WitnessSize says.
func TestWitnessHeader(t *testing.T) {
	for _, circuit := range testCircuits {
		for _, prime := range testPrimes {
			data, err := os.ReadFile(testdataPath(circuit, prime.name, ".wtns"))
			if err != nil {
				t.Fatal(err)
			}
			curve, n, err := ParseWitnessHeader(data)
			if err != nil {
				t.Fatal(err)
			}
			w := mustReadWitness(t, circuit, prime.name)
			if curve != prime.curve || int(n) != len(w.Values) || WitnessSize(uint64(n)) != int64(len(data)) {
				t.Fatalf("%s %s: header says %s, %d values, size %d; the file has %s, %d values, %d bytes",
					circuit, prime.name, curve, n, WitnessSize(uint64(n)), w.Curve, len(w.Values), len(data))
			}
			if _, _, err := ParseWitnessHeader(data[:len(data)-1]); err == nil {
				t.Fatalf("%s %s: a truncated file's header accepted", circuit, prime.name)
			}
		}
	}
}
