package keyfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// FuzzOpen feeds Open mutated key files: it must return an error or a key whose
// every section lies inside the file, never panic or read outside the mapping
// (Verify then reads every section). The seeds are a valid key of a 4-step circuit
// (small, so the fuzzer mutates it quickly) and truncations of it;
// `go test -run '^$' -fuzz '^FuzzOpen$' ./sdk/keyfile` explores from there.
func FuzzOpen(f *testing.F) {
	clean := tinyKeyBytes(f)
	f.Add(clean)
	f.Add(clean[:HeaderSize])
	f.Add(clean[:HeaderSize+Align])
	f.Add(clean[:len(clean)-1])
	f.Add([]byte(Magic))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp, err := os.CreateTemp(dir, "fuzz-*.pk")
		if err != nil {
			t.Fatal(err)
		}
		path := tmp.Name()
		defer os.Remove(path)
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err != nil || cerr != nil {
			t.Fatal(err, cerr)
		}
		k, err := Open(path)
		if err != nil {
			return
		}
		defer k.Close()
		for _, s := range k.Sections() {
			if s.Offset+s.Length > uint64(len(data)) {
				t.Fatalf("section %v ends at %d, past the file's %d bytes", s.Kind, s.Offset+s.Length, len(data))
			}
		}
		_ = k.Verify() // reads every section: must not fault
		pk := blsKey(t, k)
		if uint64(len(pk.InfinityA)) != pk.NbWires || uint64(len(pk.InfinityB)) != pk.NbWires {
			t.Fatalf("opened a key with %d and %d infinity flags for %d wires", len(pk.InfinityA), len(pk.InfinityB), pk.NbWires)
		}
	})
}

// tinyKeyBytes is the key file of a 4-step squareChain.
func tinyKeyBytes(tb testing.TB) []byte {
	tb.Helper()
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &testcircuit.SquareChain{N: 4})
	if err != nil {
		tb.Fatal(err)
	}
	pk, _, err := groth16.Setup(ccs)
	if err != nil {
		tb.Fatal(err)
	}
	k, err := fromGnark(pk.(*groth16_bls12381.ProvingKey))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "tiny.pk")
	if _, err := Write(path, k); err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
