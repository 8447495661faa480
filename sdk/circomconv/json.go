package circomconv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk"
)

// snarkjsProof is proof.json as snarkjs 0.7.6 writes it (groth16_prove.js, then
// JSON.stringify(proof, null, 1)): points in projective coordinates as decimal
// strings, z = 1 for an affine point, G2 coordinates as [c0, c1]. The field order is
// snarkjs's.
type snarkjsProof struct {
	PiA      []string   `json:"pi_a"`
	PiB      [][]string `json:"pi_b"`
	PiC      []string   `json:"pi_c"`
	Protocol string     `json:"protocol"`
	Curve    string     `json:"curve"`
}

// snarkjsCurve is what snarkjs calls BLS12-381 in proof.json and its verifying keys.
const snarkjsCurve = "bls12381"

// marshalSnarkjs encodes v as snarkjs's files are: JSON.stringify with an indent of
// one space and no newline at the end.
func marshalSnarkjs(v any) []byte {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		panic(err) // strings and slices of strings always encode
	}
	return b
}

// ProofJSON returns p as snarkjs's proof.json, byte for byte as snarkjs writes it,
// so `snarkjs groth16 verify` reads it.
func ProofJSON(p *sdk.BLS12381Proof) []byte {
	return marshalSnarkjs(snarkjsProof{
		PiA:      g1JSON(&p.Ar),
		PiB:      g2JSON(&p.Bs),
		PiC:      g1JSON(&p.Krs),
		Protocol: "groth16",
		Curve:    snarkjsCurve,
	})
}

// g1JSON is a G1 point as snarkjs's G1.toObject of an affine point: [x, y, "1"], or
// the point at infinity as ["0", "1", "0"].
func g1JSON(p *bls12381.G1Affine) []string {
	if p.IsInfinity() {
		return []string{"0", "1", "0"}
	}
	return []string{p.X.String(), p.Y.String(), "1"}
}

// g2JSON is g1JSON for G2: [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]].
func g2JSON(p *bls12381.G2Affine) [][]string {
	if p.IsInfinity() {
		return [][]string{{"0", "0"}, {"1", "0"}, {"0", "0"}}
	}
	return [][]string{{p.X.A0.String(), p.X.A1.String()}, {p.Y.A0.String(), p.Y.A1.String()}, {"1", "0"}}
}

// PublicJSON returns the public values as snarkjs's public.json: their decimal
// values in wire order (the outputs, then the public inputs).
func PublicJSON(public []fr.Element) []byte {
	out := make([]string, len(public))
	for i := range public {
		out[i] = public[i].String()
	}
	return marshalSnarkjs(out)
}

// ParseProofJSON reads a snarkjs proof.json of a BLS12-381 Groth16 proof, such as
// `snarkjs groth16 prove` writes, and checks each point is on the curve and in the
// subgroup.
func ParseProofJSON(data []byte) (*sdk.BLS12381Proof, error) {
	var sp snarkjsProof
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		return nil, fmt.Errorf("circomconv: proof.json: %w", err)
	}
	if sp.Protocol != "groth16" || sp.Curve != snarkjsCurve {
		return nil, fmt.Errorf("circomconv: proof.json is a %q proof on %q, want groth16 on %s", sp.Protocol, sp.Curve, snarkjsCurve)
	}
	p := &sdk.BLS12381Proof{}
	var err error
	if p.Ar, err = parseG1(sp.PiA, "pi_a"); err != nil {
		return nil, err
	}
	if p.Bs, err = parseG2(sp.PiB, "pi_b"); err != nil {
		return nil, err
	}
	if p.Krs, err = parseG1(sp.PiC, "pi_c"); err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePublicJSON reads a snarkjs public.json: decimal values below the scalar
// field's prime.
func ParsePublicJSON(data []byte) ([]fr.Element, error) {
	var values []string
	if err := json.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("circomconv: public.json: %w", err)
	}
	out := make([]fr.Element, len(values))
	for i, v := range values {
		n, ok := new(big.Int).SetString(v, 10)
		if !ok || n.Sign() < 0 || n.Cmp(fr.Modulus()) >= 0 {
			return nil, fmt.Errorf("circomconv: public.json value %d (%q) is not a decimal below the BLS12-381 scalar field's prime", i, v)
		}
		out[i].SetBigInt(n)
	}
	return out, nil
}

// parseFp reads a decimal base field element.
func parseFp(s, what string) (fp.Element, error) {
	var e fp.Element
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() < 0 || n.Cmp(fp.Modulus()) >= 0 {
		return e, fmt.Errorf("circomconv: proof.json %s: %q is not a decimal below the BLS12-381 base field's prime", what, s)
	}
	e.SetBigInt(n)
	return e, nil
}

func parseG1(coords []string, what string) (bls12381.G1Affine, error) {
	var p bls12381.G1Affine
	if len(coords) != 3 || coords[2] != "1" {
		return p, fmt.Errorf("circomconv: proof.json %s: want [x, y, \"1\"], an affine point", what)
	}
	var err error
	if p.X, err = parseFp(coords[0], what); err != nil {
		return p, err
	}
	if p.Y, err = parseFp(coords[1], what); err != nil {
		return p, err
	}
	if !p.IsOnCurve() || !p.IsInSubGroup() {
		return p, fmt.Errorf("circomconv: proof.json %s is not a point of BLS12-381's G1 subgroup", what)
	}
	return p, nil
}

func parseG2(coords [][]string, what string) (bls12381.G2Affine, error) {
	var p bls12381.G2Affine
	if len(coords) != 3 || len(coords[0]) != 2 || len(coords[1]) != 2 || len(coords[2]) != 2 || coords[2][0] != "1" || coords[2][1] != "0" {
		return p, fmt.Errorf("circomconv: proof.json %s: want [[x0, x1], [y0, y1], [\"1\", \"0\"]], an affine point", what)
	}
	var err error
	for i, dst := range []*fp.Element{&p.X.A0, &p.X.A1, &p.Y.A0, &p.Y.A1} {
		if *dst, err = parseFp(coords[i/2][i%2], what); err != nil {
			return p, err
		}
	}
	if !p.IsOnCurve() || !p.IsInSubGroup() {
		return p, fmt.Errorf("circomconv: proof.json %s is not a point of BLS12-381's G2 subgroup", what)
	}
	return p, nil
}
