package circomconv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
)

// snarkjsProof is proof.json as snarkjs 0.7.6 writes it (groth16_prove.js, then
// JSON.stringify(proof, null, 1)): points in projective coordinates as decimal
// strings, z = 1 for an affine point, G2 coordinates as [c0, c1], and the curve as
// ffjavascript names it ("bn128", "bls12381"). The field order is snarkjs's.
type snarkjsProof struct {
	PiA      []string   `json:"pi_a"`
	PiB      [][]string `json:"pi_b"`
	PiC      []string   `json:"pi_c"`
	Protocol string     `json:"protocol"`
	Curve    string     `json:"curve"`
}

// The point at infinity as snarkjs's G1.toObject and G2.toObject write it.
var (
	g1InfinityJSON = []string{"0", "1", "0"}
	g2InfinityJSON = [][]string{{"0", "0"}, {"1", "0"}, {"0", "0"}}
)

// marshalSnarkjs encodes v as snarkjs's files are: JSON.stringify with an indent of
// one space and no newline at the end.
func marshalSnarkjs(v any) []byte {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		panic(err) // strings and slices of strings always encode
	}
	return b
}

// ProofJSON returns p as snarkjs's proof.json for p's curve, byte for byte as snarkjs
// writes it, so `snarkjs groth16 verify` reads it. G1 and G2 must be one curve's
// affine points (sdk.BLS12381Proof, sdk.BN254Proof); any other type arguments are a
// programming error, and panic.
func ProofJSON[G1, G2 any](p *sdk.Proof[G1, G2]) []byte {
	id, err := pointCurve[G1, G2]()
	if err != nil {
		panic(err)
	}
	q := id.BaseField()
	return marshalSnarkjs(snarkjsProof{
		PiA:      g1JSON(&p.Ar, q),
		PiB:      g2JSON(&p.Bs, q),
		PiC:      g1JSON(&p.Krs, q),
		Protocol: "groth16",
		Curve:    curve.SnarkjsName(id),
	})
}

// g1JSON is the G1 point *p (a type layout knows) as snarkjs's G1.toObject of an
// affine point: [x, y, "1"], or the point at infinity as ["0", "1", "0"]. q is the
// base field's prime.
func g1JSON(p any, q *big.Int) []string {
	if p.(point).IsInfinity() {
		return slices.Clone(g1InfinityJSON)
	}
	_, c, _ := layout(p)
	return []string{coordinateValue(c[0], q).String(), coordinateValue(c[1], q).String(), "1"}
}

// g2JSON is g1JSON for G2: [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]].
func g2JSON(p any, q *big.Int) [][]string {
	if p.(point).IsInfinity() {
		return slices.Clone(g2InfinityJSON)
	}
	_, c, _ := layout(p)
	v := make([]string, len(c))
	for i := range c {
		v[i] = coordinateValue(c[i], q).String()
	}
	return [][]string{{v[0], v[1]}, {v[2], v[3]}, {"1", "0"}}
}

// PublicJSON returns the public values as snarkjs's public.json: their decimal
// values in wire order (the outputs, then the public inputs). The file does not name
// its curve.
func PublicJSON[S any, PS curve.Scalar[S]](public []S) []byte {
	out := make([]string, len(public))
	n := new(big.Int)
	for i := range public {
		out[i] = PS(&public[i]).BigInt(n).String()
	}
	return marshalSnarkjs(out)
}

// ParseProofJSON reads a snarkjs proof.json of a Groth16 proof on the curve whose
// affine points are G1 and G2, such as `snarkjs groth16 prove` writes, and checks
// each point is on the curve and in the subgroup. It refuses a proof of another
// curve (by its "curve" field), wrapping ErrWrongCurve.
func ParseProofJSON[G1, G2 any](data []byte) (*sdk.Proof[G1, G2], error) {
	id, err := pointCurve[G1, G2]()
	if err != nil {
		return nil, err
	}
	var sp snarkjsProof
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		return nil, fmt.Errorf("circomconv: proof.json: %w", err)
	}
	if sp.Protocol != "groth16" {
		return nil, fmt.Errorf("circomconv: proof.json is a %q proof, want groth16", sp.Protocol)
	}
	got := snarkjsCurve(sp.Curve)
	if got == ecc.UNKNOWN {
		return nil, fmt.Errorf("circomconv: proof.json's curve %q is neither bls12381 nor bn128", sp.Curve)
	}
	if err := checkCurve(got, id, "proof.json"); err != nil {
		return nil, err
	}
	q := id.BaseField()
	p := &sdk.Proof[G1, G2]{}
	if p.Ar, err = parseG1[G1](sp.PiA, q, "pi_a"); err != nil {
		return nil, err
	}
	if p.Bs, err = parseG2[G2](sp.PiB, q, "pi_b"); err != nil {
		return nil, err
	}
	if p.Krs, err = parseG1[G1](sp.PiC, q, "pi_c"); err != nil {
		return nil, err
	}
	return p, nil
}

// snarkjsCurve returns the curve snarkjs names so, or ecc.UNKNOWN.
func snarkjsCurve(name string) ecc.ID {
	for _, id := range curve.IDs {
		if curve.SnarkjsName(id) == name {
			return id
		}
	}
	return ecc.UNKNOWN
}

// ParsePublicJSON reads a snarkjs public.json into the scalar field whose element is
// S: decimal values below its prime. public.json does not name its curve, so only a
// value too large for S's field tells a file of another curve.
func ParsePublicJSON[S any, PS curve.Scalar[S]](data []byte) ([]S, error) {
	var values []string
	if err := json.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("circomconv: public.json: %w", err)
	}
	id, err := scalarCurve[S, PS]()
	if err != nil {
		return nil, err
	}
	r, field := id.ScalarField(), curveName(id)+"'s scalar field"
	out := make([]S, len(values))
	for i, v := range values {
		n, err := parseDecimal(v, r, field)
		if err != nil {
			return nil, fmt.Errorf("circomconv: public.json value %d: %w", i, err)
		}
		PS(&out[i]).SetBigInt(n)
	}
	return out, nil
}

// parseDecimal reads a decimal below m, the prime of field, as snarkjs writes field
// elements.
func parseDecimal(s string, m *big.Int, field string) (*big.Int, error) {
	// A canonical value has no more digits than m; refusing longer strings before
	// parsing bounds the work an untrusted file can ask for.
	if len(s) <= len(m.String()) {
		if n, ok := new(big.Int).SetString(s, 10); ok && n.Sign() >= 0 && n.Cmp(m) < 0 {
			return n, nil
		}
	}
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return nil, fmt.Errorf("%q is not a decimal below the prime of %s", s, field)
}

// parseG1 reads a G1 point of type P written as g1JSON writes it, and checks it.
func parseG1[P any](coords []string, q *big.Int, what string) (P, error) {
	var p P
	if slices.Equal(coords, g1InfinityJSON) {
		return p, nil // the zero point is gnark-crypto's point at infinity
	}
	if len(coords) != 3 || coords[2] != "1" {
		return p, fmt.Errorf("circomconv: proof.json %s: want [x, y, \"1\"], an affine point", what)
	}
	return p, setCoordinates(&p, coords[:2], q, what)
}

// parseG2 reads a G2 point of type P written as g2JSON writes it, and checks it.
func parseG2[P any](coords [][]string, q *big.Int, what string) (P, error) {
	var p P
	if slices.EqualFunc(coords, g2InfinityJSON, slices.Equal) {
		return p, nil
	}
	if len(coords) != 3 || len(coords[0]) != 2 || len(coords[1]) != 2 || !slices.Equal(coords[2], []string{"1", "0"}) {
		return p, fmt.Errorf("circomconv: proof.json %s: want [[x0, x1], [y0, y1], [\"1\", \"0\"]], an affine point", what)
	}
	return p, setCoordinates(&p, []string{coords[0][0], coords[0][1], coords[1][0], coords[1][1]}, q, what)
}

// setCoordinates sets *p's coordinates, in layout's order, from their decimals, below
// the base field's prime q, and checks the point is on the curve and in the subgroup.
func setCoordinates[P any](p *P, decimals []string, q *big.Int, what string) error {
	id, coords, _ := layout(p)
	for i, s := range decimals {
		v, err := parseDecimal(s, q, curveName(id)+"'s base field")
		if err != nil {
			return fmt.Errorf("circomconv: proof.json %s: %w", what, err)
		}
		setCoordinate(coords[i], v, q)
	}
	if pt := any(p).(point); !pt.IsOnCurve() || !pt.IsInSubGroup() {
		return fmt.Errorf("circomconv: proof.json %s is not a point of %s's %s subgroup", what, curveName(id), groupName(coords))
	}
	return nil
}
