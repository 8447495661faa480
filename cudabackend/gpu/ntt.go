package gpu

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Fr is the element type of a scalar field the NTT runs over (NTT,
// NTTDevice, PrepareNTT): gnark-crypto's BLS12-381 fr.Element or BN254
// fr.Element, 32 bytes each in Montgomery form. The same kernels run both
// (ntt.cu instantiates them per field, ntt.h's zk_ntt_curve picks one); a
// transform matches the curve's fr/fft Domain with its default shift (7 for
// BLS12-381, 5 for BN254), up to 2^MaxLogN for both (BN254's field has no
// root of unity of order 2^29).
type Fr interface {
	fr.Element | bn254fr.Element
}
