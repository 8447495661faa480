package curve

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Scalar is the constraint on *S for a curve's scalar field element S: the methods both
// curves' fr.Element have and zkhost's generic code calls.
type Scalar[S any] interface {
	*S
	SetZero() *S
	SetOne() *S
	SetUint64(v uint64) *S
	SetBigInt(v *big.Int) *S
	SetRandom() (*S, error)
	Set(x *S) *S
	Add(x, y *S) *S
	Sub(x, y *S) *S
	Mul(x, y *S) *S
	Square(x *S) *S
	Double(x *S) *S
	Neg(x *S) *S
	Inverse(x *S) *S
	Exp(x S, k *big.Int) *S
	Legendre() int
	IsZero() bool
	IsOne() bool
	Equal(x *S) bool
	BigInt(z *big.Int) *big.Int
	SetBytesCanonical(b []byte) error
	Bytes() [32]byte
	String() string
}

// Domain is an FFT domain of one curve's scalar field (gnark-crypto's fft.Domain): the
// subgroup of N-th roots of unity and a coset of it.
type Domain[S any] interface {
	// Size is N.
	Size() uint64
	// Generator is the domain's primitive N-th root of unity ω.
	Generator() S
	// Shift is the coset's shift g: the coset is g·<ω>.
	Shift() S
	// Transform runs gnark-crypto's FFT, or FFTInverse when inverse is set, in place on
	// tasks goroutines: decimation in frequency when dif is set (natural order in,
	// bit-reversed out), in time otherwise (the reverse); on the coset when coset is set.
	// Every mode, as a reference for the GPU's NTT; the prover uses two (Forward,
	// Inverse).
	Transform(a []S, inverse, dif, coset bool, tasks int)
}

// Curve is one pairing curve's binding: S its scalar field element, G1 and G2 its affine
// points, G1J and G2J its Jacobian points. Implementations are zero-size (BLS12381, BN254).
//
// Deliberately parallel G1 and G2 methods: gnark-crypto's group types share no interface,
// and the two groups' calls differ only in their types.
type Curve[S, G1, G1J, G2, G2J any] interface {
	// ID is the curve's gnark-crypto id; ID().ScalarField() is its scalar field's modulus.
	ID() ecc.ID

	// NewDomain returns the FFT domain of size n (a power of two within the field's
	// two-adicity), with gnark-crypto's coset shift, or shift when it is not nil.
	NewDomain(n uint64, shift *S) Domain[S]

	// G1MultiExp returns Σ scalars[i]·points[i] on tasks goroutines (gnark-crypto's MultiExp).
	G1MultiExp(points []G1, scalars []S, tasks int) (G1J, error)
	// G1Infinity returns the point at infinity.
	G1Infinity() G1J
	// G1FromAffine returns a as a Jacobian point.
	G1FromAffine(a *G1) G1J
	// G1ToAffine returns p in affine coordinates.
	G1ToAffine(p *G1J) G1
	// G1Add sets p to p + q.
	G1Add(p, q *G1J)
	// G1AddMixed sets p to p + a.
	G1AddMixed(p *G1J, a *G1)
	// G1ScalarMul returns k·p.
	G1ScalarMul(p *G1J, k *big.Int) G1J

	// The same in G2.
	G2MultiExp(points []G2, scalars []S, tasks int) (G2J, error)
	G2Infinity() G2J
	G2FromAffine(a *G2) G2J
	G2ToAffine(p *G2J) G2
	G2Add(p, q *G2J)
	G2AddMixed(p *G2J, a *G2)
	G2ScalarMul(p *G2J, k *big.Int) G2J
}

// IDOf returns the curve whose G1 affine point type is G1, or ecc.UNKNOWN: the key file,
// which holds points but no binding, writes it in its header.
func IDOf[G1 any]() ecc.ID {
	switch any(*new(G1)).(type) {
	case bls12381.G1Affine:
		return ecc.BLS12_381
	case bn254.G1Affine:
		return ecc.BN254
	}
	return ecc.UNKNOWN
}

// ScalarIDOf returns the curve whose scalar field element type (fr.Element) is S, or
// ecc.UNKNOWN: code that holds raw scalars checks them against a key's curve so.
func ScalarIDOf[S any]() ecc.ID {
	switch any(*new(S)).(type) {
	case blsfr.Element:
		return ecc.BLS12_381
	case bnfr.Element:
		return ecc.BN254
	}
	return ecc.UNKNOWN
}

// TwoAdicity returns the largest s such that 2^s divides r − 1, r the curve's scalar field
// modulus: the largest FFT domain over it has 2^s elements (32 for BLS12-381, 28 for BN254).
func TwoAdicity(id ecc.ID) int {
	rm1 := new(big.Int).Sub(id.ScalarField(), big.NewInt(1))
	return int(rm1.TrailingZeroBits())
}

// IDs are the curves zkhost proves on, BLS12-381 first.
var IDs = []ecc.ID{ecc.BLS12_381, ecc.BN254}

// names are each curve's names: as zkhost spells it in files and the contract
// (sdk.Curve's words), as prose and error messages write it, and as circom's
// --prime and snarkjs (its proof.json's "curve", its powers of tau) name it.
var names = map[ecc.ID]struct{ name, title, snarkjs string }{
	ecc.BLS12_381: {"bls12-381", "BLS12-381", "bls12381"},
	ecc.BN254:     {"bn254", "BN254", "bn128"},
}

// Parse returns the curve Name spells name, or an error that lists the names.
func Parse(name string) (ecc.ID, error) {
	for _, id := range IDs {
		if names[id].name == name {
			return id, nil
		}
	}
	return ecc.UNKNOWN, fmt.Errorf("unknown curve %q: want bls12-381 or bn254", name)
}

// SnarkjsName returns circom's and snarkjs's name of the curve ("bls12381",
// "bn128"), or "" for a curve they do not know.
func SnarkjsName(id ecc.ID) string { return names[id].snarkjs }

// Name returns the curve's name as zkhost spells it ("bls12-381", "bn254"), the words of
// sdk.Curve; "curve(ID)" for a curve zkhost does not prove on.
func Name(id ecc.ID) string { return nameOr(names[id].name, fmt.Sprintf("curve(%s)", id)) }

// Title returns the curve's name as prose and error messages write it
// ("BLS12-381", "BN254"); gnark's name for a curve zkhost does not prove on.
func Title(id ecc.ID) string { return nameOr(names[id].title, id.String()) }

// TitleOf is Title of the curve zkhost spells name ("bn254": "BN254"), or
// name quoted when it is no curve zkhost knows: what an error message says
// of a curve named by a file, a handle or a config.
func TitleOf(name string) string {
	id, err := Parse(name)
	if err != nil {
		return fmt.Sprintf("%q", name)
	}
	return Title(id)
}

// nameOr is name, or unknown where the table has none.
func nameOr(name, unknown string) string {
	if name == "" {
		return unknown
	}
	return name
}

// DomainBytes is the memory a gnark-crypto domain of size n keeps resident, on either
// curve: twiddles and inverse twiddles (about n elements each) and the coset tables (n
// elements each), 32 bytes per element.
func DomainBytes(n uint64) uint64 { return 4 * n * 32 }

// Inverse turns evaluations on d in natural order (on its coset when coset is set)
// into the coefficients, bit-reversed: FFTInverse with DIF.
func Inverse[S any](d Domain[S], a []S, coset bool, tasks int) {
	d.Transform(a, true, true, coset, tasks)
}

// Forward turns bit-reversed coefficients into evaluations on d in natural order (on
// its coset when coset is set): FFT with DIT.
func Forward[S any](d Domain[S], a []S, coset bool, tasks int) {
	d.Transform(a, false, false, coset, tasks)
}
