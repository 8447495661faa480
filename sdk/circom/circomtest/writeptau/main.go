// Command writeptau writes a prepared snarkjs powers of tau for tests and benchmarks
// (circomtest.WritePtau; its speed against snarkjs's: BENCHMARKS.md, "A powers of tau for tests"), with no
// ceremony behind it, so never for a key that matters.
//
//	go run github.com/zkhost/zkhost/sdk/circom/circomtest/writeptau -curve bn128 -power 15 -out pot.ptau
package main

import (
	"crypto/rand"
	"flag"
	"fmt"
	"os"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk/circom/circomtest"
)

func main() {
	curve := flag.String("curve", "bn128", "curve, as circom's --prime names it: bn128 or bls12381")
	power := flag.Int("power", 0, "log2 of the rows the tau holds")
	out := flag.String("out", "", "file to write")
	flag.Parse()
	id, ok := map[string]ecc.ID{"bn128": ecc.BN254, "bls12381": ecc.BLS12_381}[*curve]
	if !ok || *power < 1 || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: writeptau -curve bn128|bls12381 -power N -out FILE")
		os.Exit(2)
	}
	if err := circomtest.WritePtau(*out, id, *power, rand.Reader); err != nil {
		fmt.Fprintln(os.Stderr, "writeptau:", err)
		os.Exit(1)
	}
}
