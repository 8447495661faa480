package circomconv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"

	"github.com/zkhost/zkhost/sdk/curve"
)

// ErrWrongCurve is wrapped by the error for a file (zkey, witness, proof.json) of
// another curve than the one asked for, so a caller can tell it from a damaged file.
var ErrWrongCurve = errors.New("circomconv: wrong curve")

// curveName names id in messages (curve.Title).
func curveName(id ecc.ID) string { return curve.Title(id) }

// checkCurve refuses what (a zkey, a witness) of curve got when curve want is asked
// for, naming both as zkhost and as circom and snarkjs name them (circom's --prime).
func checkCurve(got, want ecc.ID, what string) error {
	if got != want {
		return fmt.Errorf("%w: %s is for %s, want %s", ErrWrongCurve, what, curveNameLong(got), curveNameLong(want))
	}
	return nil
}

// curveNameLong is curveName with circom's and snarkjs's name of the curve.
func curveNameLong(id ecc.ID) string {
	if n := curve.SnarkjsName(id); n != "" {
		return fmt.Sprintf("%s (circom's %s)", curve.Title(id), n)
	}
	return id.String()
}

// layout is this package's one per-curve table for points: for a pointer to an
// affine point of gnark-crypto's (G1 or G2 of BLS12-381 or BN254), its curve and
// the limbs of its coordinates in snarkjs's order (x then y, a G2 coordinate as c0
// then c1), aliasing the point. ok is false for any other type.
//
// The limbs are an fp.Element's: Montgomery form with R = 2^(64·limbs), least
// significant limb first. ffjavascript's field (f1field.js) takes R = 2^(64·n64),
// n64 the prime's size in 64-bit words, and snarkjs stores a coordinate
// little-endian in that form (fromRprLEM / toRprLEM), so a coordinate's bytes in a
// zkey are its limbs, little-endian: 4 limbs (32 bytes) on BN254, 6 (48) on
// BLS12-381.
func layout(p any) (id ecc.ID, coords [][]uint64, ok bool) {
	switch p := p.(type) {
	case *bls12381.G1Affine:
		return ecc.BLS12_381, [][]uint64{p.X[:], p.Y[:]}, true
	case *bls12381.G2Affine:
		return ecc.BLS12_381, [][]uint64{p.X.A0[:], p.X.A1[:], p.Y.A0[:], p.Y.A1[:]}, true
	case *bn254.G1Affine:
		return ecc.BN254, [][]uint64{p.X[:], p.Y[:]}, true
	case *bn254.G2Affine:
		return ecc.BN254, [][]uint64{p.X.A0[:], p.X.A1[:], p.Y.A0[:], p.Y.A1[:]}, true
	}
	return ecc.UNKNOWN, nil, false
}

// point is what gnark-crypto's affine points have in common (on their pointers),
// whatever their curve and group.
type point interface {
	IsOnCurve() bool
	IsInSubGroup() bool
	IsInfinity() bool
}

// pointCurve returns the curve of G1 and G2, which must be the G1 and G2 affine
// points of one curve: the type parameters of the generic functions are checked here
// so that a wrong pair gives an error, not a wrong conversion.
func pointCurve[G1, G2 any]() (ecc.ID, error) {
	id1, c1, ok1 := layout(new(G1))
	id2, c2, ok2 := layout(new(G2))
	if !ok1 || !ok2 || len(c1) != 2 || len(c2) != 4 || id1 != id2 {
		var g1 G1
		var g2 G2
		return ecc.UNKNOWN, fmt.Errorf("circomconv: %T and %T are not the G1 and G2 affine points of BLS12-381 or BN254", g1, g2)
	}
	return id1, nil
}

// groupName is "G1" or "G2" for a point of so many coordinates.
func groupName(coords [][]uint64) string {
	if len(coords) == 2 {
		return "G1"
	}
	return "G2"
}

// pointSize is the bytes in a zkey of a point with these coordinates: 8 per limb.
func pointSize(coords [][]uint64) int {
	return 8 * len(coords) * len(coords[0])
}

// setPoint sets *p from snarkjs's bytes of it (b holds at least the point) and
// reports whether it is on the curve and in the prime-order subgroup; the point at
// infinity, all zero bytes in snarkjs and (0, 0) in gnark-crypto, is. *p must be a
// type layout knows.
func setPoint[P any](p *P, b []byte) bool {
	_, coords, _ := layout(p)
	off := 0
	for _, c := range coords {
		for i := range c {
			c[i] = binary.LittleEndian.Uint64(b[off:])
			off += 8
		}
	}
	pt := any(p).(point)
	return pt.IsOnCurve() && pt.IsInSubGroup()
}

// decodePoints decodes a run of snarkjs's points of type P and checks each, in
// parallel. what names the run in errors, which name a bad point by its index.
// Callers have checked that P is a point type layout knows.
func decodePoints[P any](b []byte, what string) ([]P, error) {
	id, coords, _ := layout(new(P))
	size := pointSize(coords)
	if len(b)%size != 0 {
		return nil, fmt.Errorf("circomconv: %s holds %d bytes, not a whole number of %s %s points of %d bytes",
			what, len(b), curveName(id), groupName(coords), size)
	}
	out := make([]P, len(b)/size)
	err := forEach(len(out), func(i int) error {
		if !setPoint(&out[i], b[size*i:]) {
			return fmt.Errorf("circomconv: %s point %d is not a %s %s point of the prime-order subgroup", what, i, curveName(id), groupName(coords))
		}
		return nil
	})
	return out, err
}

// decodePoint decodes and checks the one point of type P that b holds. what names
// it in errors.
func decodePoint[P any](b []byte, what string) (P, error) {
	var p P
	id, coords, _ := layout(&p)
	if size := pointSize(coords); len(b) != size {
		return p, fmt.Errorf("circomconv: %s holds %d bytes, want one %s %s point of %d bytes", what, len(b), curveName(id), groupName(coords), size)
	}
	if !setPoint(&p, b) {
		return p, fmt.Errorf("circomconv: %s is not a %s %s point of the prime-order subgroup", what, curveName(id), groupName(coords))
	}
	return p, nil
}

// forEach runs check for every index in [0, n) on all cores and returns the error of
// the lowest index that failed, so the error does not depend on scheduling.
func forEach(n int, check func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	chunk := (n + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w * chunk; i < min(n, (w+1)*chunk); i++ {
				if err := check(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// coordinateValue returns the value of a coordinate held as Montgomery limbs
// (layout's): limbs·R⁻¹ mod q, R = 2^(64·len(limbs)). Big-integer arithmetic keeps it
// curve-generic; it serves JSON's few points, not a key's many.
func coordinateValue(limbs []uint64, q *big.Int) *big.Int {
	b := make([]byte, 8*len(limbs))
	for i, l := range limbs {
		binary.BigEndian.PutUint64(b[len(b)-8*(i+1):], l)
	}
	v := new(big.Int).SetBytes(b)
	rInv := new(big.Int).Lsh(big.NewInt(1), uint(64*len(limbs)))
	rInv.ModInverse(rInv, q)
	return v.Mul(v, rInv).Mod(v, q)
}

// setCoordinate sets limbs to the Montgomery form of v, below q: v·R mod q.
func setCoordinate(limbs []uint64, v, q *big.Int) {
	m := new(big.Int).Lsh(v, uint(64*len(limbs)))
	m.Mod(m, q)
	b := m.FillBytes(make([]byte, 8*len(limbs)))
	for i := range limbs {
		limbs[i] = binary.BigEndian.Uint64(b[len(b)-8*(i+1):])
	}
}
