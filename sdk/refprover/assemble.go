package refprover

import (
	"math/big"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// RandomRS returns the two blinding scalars of one proof, drawn uniformly from the
// scalar field with crypto/rand. Draw fresh ones for every proof: reusing r and s
// across two proofs of the same key leaks the witness.
func RandomRS() (r, s fr.Element, err error) {
	if _, err = r.SetRandom(); err != nil {
		return r, s, err
	}
	if _, err = s.SetRandom(); err != nil {
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
func Assemble(pk *keyfile.ProvingKey, res MSMResults, r, s fr.Element) *sdk.Proof {
	var rBig, sBig, krBig big.Int
	var kr fr.Element
	kr.Mul(&r, &s).Neg(&kr)
	r.BigInt(&rBig)
	s.BigInt(&sBig)
	kr.BigInt(&krBig)

	var delta, rDelta, sDelta, krDelta bls12381.G1Jac
	delta.FromAffine(&pk.G1Delta)
	rDelta.ScalarMultiplication(&delta, &rBig)
	sDelta.ScalarMultiplication(&delta, &sBig)
	krDelta.ScalarMultiplication(&delta, &krBig)

	ar := res.Ar
	ar.AddMixed(&pk.G1Alpha)
	ar.AddAssign(&rDelta)

	bs1 := res.Bs1
	bs1.AddMixed(&pk.G1Beta)
	bs1.AddAssign(&sDelta)

	krs := res.Krs
	krs.AddAssign(&krDelta)
	krs.AddAssign(&res.Krs2)
	var p bls12381.G1Jac
	p.ScalarMultiplication(&ar, &sBig)
	krs.AddAssign(&p)
	p.ScalarMultiplication(&bs1, &rBig)
	krs.AddAssign(&p)

	var delta2 bls12381.G2Jac
	delta2.FromAffine(&pk.G2Delta)
	delta2.ScalarMultiplication(&delta2, &sBig)
	bs := res.Bs2
	bs.AddAssign(&delta2)
	bs.AddMixed(&pk.G2Beta)

	proof := &sdk.Proof{}
	proof.Ar.FromJacobian(&ar)
	proof.Krs.FromJacobian(&krs)
	proof.Bs.FromJacobian(&bs)
	return proof
}
