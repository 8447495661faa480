package circom

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
)

// FieldElementSize is the byte size of a field element in the files: both supported fields fit
// in 32 bytes, and circom and snarkjs round a field's size up to whole 64-bit words.
const FieldElementSize = 32

// FieldElement is a field element as circom's files store it: the canonical value, not in
// Montgomery form, in little-endian byte order. A FieldElement from this package's readers is
// below its file's prime. For gnark-crypto, fr.LittleEndian.Element(&e) of the curve's fr package
// (ecc/bn254/fr or ecc/bls12-381/fr) gives the element; it also refuses a value not below the
// modulus.
type FieldElement [FieldElementSize]byte

// BigInt returns the element's value.
func (e *FieldElement) BigInt() *big.Int {
	return e.setBigInt(new(big.Int))
}

// setBigInt sets z to the element's value and returns z, for loops that reuse one big.Int.
func (e *FieldElement) setBigInt(z *big.Int) *big.Int {
	var bigEndian [FieldElementSize]byte
	for i := range e {
		bigEndian[FieldElementSize-1-i] = e[i]
	}
	return z.SetBytes(bigEndian[:])
}

// curveOfPrime recognises the curve whose scalar field has this prime. The primes come from
// gnark-crypto, so there is one source for them.
func curveOfPrime(prime *big.Int) (ecc.ID, error) {
	for _, curve := range []ecc.ID{ecc.BN254, ecc.BLS12_381} {
		if prime.Cmp(curve.ScalarField()) == 0 {
			return curve, nil
		}
	}
	return ecc.UNKNOWN, fmt.Errorf("%w: %s is the scalar field of neither BN254 nor BLS12-381", ErrUnknownPrime, prime)
}

// fieldHeader is the start of the header section of .r1cs and .wtns files alike: the element
// size (uint32) and the prime, little-endian in that many bytes.
type fieldHeader struct {
	prime *big.Int
	curve ecc.ID
}

func readFieldHeader(r *byteReader) (fieldHeader, error) {
	size, err := r.uint32()
	if err != nil {
		return fieldHeader{}, err
	}
	if size != FieldElementSize {
		return fieldHeader{}, fmt.Errorf("%w: %s: field elements of %d bytes, want %d", ErrFieldSize, r.what, size, FieldElementSize)
	}
	var primeBytes FieldElement
	b, err := r.bytes(FieldElementSize)
	if err != nil {
		return fieldHeader{}, err
	}
	copy(primeBytes[:], b)
	prime := primeBytes.BigInt()
	curve, err := curveOfPrime(prime)
	if err != nil {
		return fieldHeader{}, fmt.Errorf("%s: %w", r.what, err)
	}
	return fieldHeader{prime: prime, curve: curve}, nil
}

// readFieldElement reads one element and checks that it is below the prime, so that every
// element this package returns has one representation.
func readFieldElement(r *byteReader, prime, scratch *big.Int) (FieldElement, error) {
	var e FieldElement
	b, err := r.bytes(FieldElementSize)
	if err != nil {
		return e, err
	}
	copy(e[:], b)
	if e.setBigInt(scratch).Cmp(prime) >= 0 {
		return e, fmt.Errorf("%w: %s: %s", ErrNotCanonical, r.what, scratch)
	}
	return e, nil
}
