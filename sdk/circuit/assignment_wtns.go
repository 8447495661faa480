package circuit

import (
	"errors"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/circomconv"
)

// A circom witness (.wtns, as snarkjs and circom's witness generators write it) is
// the third encoding of a wire assignment: the value of every wire, wire 0 first, in
// circom's order, which is the order of the constraint system ImportCircom writes.
// Its values are canonical little-endian scalars, where the other encodings' are
// big-endian.

// IsWtns reports whether data is a circom witness: it starts with the "wtns" magic.
func IsWtns(data []byte) bool {
	return len(data) >= 4 && string(data[:4]) == "wtns"
}

// checkWtns checks a .wtns file's container, field and count against circuit c
// without decoding its values.
func checkWtns(data []byte, c *Circuit) error {
	curve, n, err := circom.ParseWitnessHeader(data)
	if err != nil {
		return fmt.Errorf("is not a valid circom witness: %w", err)
	}
	switch {
	case curve == ecc.BN254:
		return fmt.Errorf("is a circom witness for BN254: %w", circomconv.ErrBN254)
	case curve != ecc.BLS12_381:
		return fmt.Errorf("is a circom witness for %s, want BLS12-381", curve)
	case int64(n) != int64(c.NbWires):
		return fmt.Errorf("is a circom witness of %d wires, circuit %s has %d", n, c.Name, c.NbWires)
	}
	return nil
}

// parseWtnsInto decodes a .wtns file into W (c.NbWires values) after checkWtns.
func parseWtnsInto(data []byte, c *Circuit, threads int, W []fr.Element) error {
	if err := checkWtns(data, c); err != nil {
		return err
	}
	w, err := circom.ParseWitness(data)
	if err != nil {
		return fmt.Errorf("is not a valid circom witness: %w", err)
	}
	if len(W) != len(w.Values) {
		return errors.New("destination length differs from the witness's")
	}
	bad := firstFailure(len(W), threads, func(lo, hi int) (int, error) {
		for i := lo; i < hi; i++ {
			v, err := fr.LittleEndian.Element((*[fr.Bytes]byte)(&w.Values[i]))
			if err != nil {
				return i, err
			}
			W[i] = v
		}
		return -1, nil
	})
	if bad.index >= 0 {
		return fmt.Errorf("wire %d is not a canonical BLS12-381 scalar: %v", bad.index, bad.err)
	}
	return nil
}
