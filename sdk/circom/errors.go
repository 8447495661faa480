package circom

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error of this package wraps one of them, with a message that says where
// in the file or the witness the problem is.
var (
	// ErrTruncated: the input ends before a field, a section or a count says it should.
	ErrTruncated = errors.New("circom: file truncated")
	// ErrMagic: the first four bytes are not the format's magic ("r1cs", "wtns" or "zkey").
	ErrMagic = errors.New("circom: wrong magic")
	// ErrVersion: the format version is not the one this package reads.
	ErrVersion = errors.New("circom: unsupported version")
	// ErrSections: the sections do not fit together (a size that runs past the end or leaves
	// bytes over, a section missing or duplicated, a section whose content is not its size).
	ErrSections = errors.New("circom: malformed sections")
	// ErrFieldSize: the field element size is not 32 bytes.
	ErrFieldSize = errors.New("circom: unsupported field size")
	// ErrUnknownPrime: the prime is neither the BN254 nor the BLS12-381 scalar field.
	ErrUnknownPrime = errors.New("circom: unsupported prime")
	// ErrNotCanonical: a field element is not below the prime.
	ErrNotCanonical = errors.New("circom: field element not below the prime")
	// ErrWireIndex: a wire index or a wire count is out of range.
	ErrWireIndex = errors.New("circom: wire index out of range")
	// ErrCustomGates: the r1cs uses custom gates, which only PLONK can prove.
	ErrCustomGates = errors.New("circom: custom gates are not supported")
	// ErrWitnessMismatch: the witness is not for this r1cs (another prime, another wire count),
	// or its wire 0 is not 1.
	ErrWitnessMismatch = errors.New("circom: witness does not match the r1cs")
	// ErrProtocol: a .zkey is for another proving system than Groth16 (PLONK, FFLONK).
	ErrProtocol = errors.New("circom: not a Groth16 key")
	// ErrKeyMismatch: a .zkey was not made for the .r1cs it is checked against.
	ErrKeyMismatch = errors.New("circom: zkey does not match the r1cs")
	// ErrUnsatisfied: the witness does not satisfy a constraint. The error is an
	// *UnsatisfiedError.
	ErrUnsatisfied = errors.New("circom: constraint not satisfied")
)

// UnsatisfiedError names the first constraint that a witness does not satisfy.
type UnsatisfiedError struct {
	// Constraint is the constraint's index in the r1cs file, counted from zero as snarkjs counts.
	Constraint int
}

func (e *UnsatisfiedError) Error() string {
	return fmt.Sprintf("%v: constraint %d: A·B != C", ErrUnsatisfied, e.Constraint)
}

// Unwrap makes errors.Is(err, ErrUnsatisfied) hold.
func (e *UnsatisfiedError) Unwrap() error { return ErrUnsatisfied }
