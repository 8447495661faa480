package keyfile

import (
	"path/filepath"
	"testing"

	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
)

// fromGnark copies a gnark proving key's points into a ProvingKey, for the test
// fixtures. sdk/keyconv.FromGnark is the real conversion (and its tests check it
// against gnark); it imports this package, so this package's tests cannot use it.
func fromGnark(pk *groth16_bls12381.ProvingKey) (*BLS12381Key, error) {
	k := &BLS12381Key{
		DomainSize: pk.Domain.Cardinality,
		NbWires:    uint64(len(pk.InfinityA)),
		NbPublic:   uint64(len(pk.InfinityA) - len(pk.G1.K)),
		G1Alpha:    pk.G1.Alpha, G1Beta: pk.G1.Beta, G1Delta: pk.G1.Delta,
		G1A: pk.G1.A, G1B: pk.G1.B, G1K: pk.G1.K, G1Z: pk.G1.Z,
		G2Beta: pk.G2.Beta, G2Delta: pk.G2.Delta, G2B: pk.G2.B,
		InfinityA: pk.InfinityA, InfinityB: pk.InfinityB,
	}
	return k, k.Check()
}

// blsKey returns f's BLS12-381 key, failing the test when f holds another curve's.
func blsKey(t testing.TB, f *File) *BLS12381Key {
	t.Helper()
	k, err := f.BLS12381()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeAndOpen writes k to a new key file, opens it and checks every section's
// digest; the file is closed when the test ends.
func writeAndOpen[G1, G2 any](t testing.TB, k *ProvingKey[G1, G2]) *File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "k.pk")
	if _, err := Write(path, k); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	return f
}
