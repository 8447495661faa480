package testcircuit

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// RandomVector returns n random field elements: the stand-in for a
// partition's vectors in tests of how they are stored and moved.
func RandomVector(t testing.TB, n int) []fr.Element {
	t.Helper()
	v := make([]fr.Element, n)
	for i := range v {
		if _, err := v[i].SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return v
}
