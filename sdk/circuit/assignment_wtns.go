package circuit

import (
	"errors"
	"fmt"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circom"
	zkcurve "github.com/zkhost/zkhost/sdk/curve"
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
// without decoding its values, and returns its values section.
func checkWtns(data []byte, c *Circuit) ([]byte, error) {
	curve, values, err := circom.WitnessValues(data)
	if err != nil {
		return nil, fmt.Errorf("is not a valid circom witness: %w", err)
	}
	n := len(values) / circom.FieldElementSize
	switch {
	case sdk.Curve(zkcurve.Name(curve)) != c.Curve:
		return nil, fmt.Errorf("is a circom witness for %s, circuit %s is %s", zkcurve.Title(curve), c.Name, c.curveTitle())
	case int64(n) != int64(c.NbWires):
		return nil, fmt.Errorf("is a circom witness of %d wires, circuit %s has %d", n, c.Name, c.NbWires)
	}
	return values, nil
}

// parseWtnsInto decodes a .wtns file into W (c.NbWires values) after checkWtns,
// straight from its values section on threads goroutines (0: every core), each
// value checked canonical as it is set.
func parseWtnsInto[S any, PS zkcurve.Scalar[S]](data []byte, c *Circuit, threads int, W []S) error {
	values, err := checkWtns(data, c)
	if err != nil {
		return err
	}
	if len(W)*circom.FieldElementSize != len(values) {
		return errors.New("destination length differs from the witness's")
	}
	bad := firstFailure(len(W), threads, func(lo, hi int) (int, error) {
		var bigEndian [circom.FieldElementSize]byte
		for i := lo; i < hi; i++ {
			v := values[i*circom.FieldElementSize : (i+1)*circom.FieldElementSize]
			for k, b := range v {
				bigEndian[len(bigEndian)-1-k] = b
			}
			if err := PS(&W[i]).SetBytesCanonical(bigEndian[:]); err != nil {
				return i, err
			}
		}
		return -1, nil
	})
	if bad.index >= 0 {
		return fmt.Errorf("wire %d is not a canonical %s scalar: %v", bad.index, c.curveTitle(), bad.err)
	}
	return nil
}
