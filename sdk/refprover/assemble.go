package refprover

import (
	"math/big"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// RandomRS returns the two blinding scalars of one proof, drawn uniformly from the
// scalar field with crypto/rand. Draw fresh ones for every proof: reusing r and s
// across two proofs of the same key leaks the witness.
func RandomRS[S any, PS curve.Scalar[S]]() (r, s S, err error) {
	if _, err = PS(&r).SetRandom(); err != nil {
		return r, s, err
	}
	if _, err = PS(&s).SetRandom(); err != nil {
		return r, s, err
	}
	return r, s, nil
}

// Assemble builds the Groth16 proof from the raw MSM results and the blinding scalars
// r and s, exactly as gnark's prover does:
//
//	Ar  = res.Ar  + α + r·δ                      (G1)
//	Bs1 = res.Bs1 + β + s·δ                      (G1, only used in Krs)
//	Bs  = res.Bs2 + β₂ + s·δ₂                    (G2)
//	Krs = res.Krs + res.Krs2 − rs·δ + s·Ar + r·Bs1 (G1)
//
// The proof has no commitments (zkhost keys have none). Cost: five scalar
// multiplications (one in G2) and a few additions, well under a millisecond per
// proof on one core; it does not depend on the circuit size.
func Assemble[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], pk *keyfile.ProvingKey[G1, G2], res MSMResults[G1J, G2J], r, s S) *sdk.Proof[G1, G2] {
	var rBig, sBig, krBig big.Int
	var kr S
	PS(&kr).Mul(&r, &s)
	PS(&kr).Neg(&kr)
	PS(&r).BigInt(&rBig)
	PS(&s).BigInt(&sBig)
	PS(&kr).BigInt(&krBig)

	delta := c.G1FromAffine(&pk.G1Delta)
	rDelta := c.G1ScalarMul(&delta, &rBig)
	sDelta := c.G1ScalarMul(&delta, &sBig)
	krDelta := c.G1ScalarMul(&delta, &krBig)

	ar := res.Ar
	c.G1AddMixed(&ar, &pk.G1Alpha)
	c.G1Add(&ar, &rDelta)

	bs1 := res.Bs1
	c.G1AddMixed(&bs1, &pk.G1Beta)
	c.G1Add(&bs1, &sDelta)

	krs := res.Krs
	c.G1Add(&krs, &krDelta)
	c.G1Add(&krs, &res.Krs2)
	p := c.G1ScalarMul(&ar, &sBig)
	c.G1Add(&krs, &p)
	p = c.G1ScalarMul(&bs1, &rBig)
	c.G1Add(&krs, &p)

	delta2 := c.G2FromAffine(&pk.G2Delta)
	delta2 = c.G2ScalarMul(&delta2, &sBig)
	bs := res.Bs2
	c.G2Add(&bs, &delta2)
	c.G2AddMixed(&bs, &pk.G2Beta)

	return &sdk.Proof[G1, G2]{
		Ar:  c.G1ToAffine(&ar),
		Krs: c.G1ToAffine(&krs),
		Bs:  c.G2ToAffine(&bs),
	}
}
