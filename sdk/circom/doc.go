// Package circom reads the binary files of circom and snarkjs, so that zkhost can take a circuit
// compiled by circom and a witness computed by its witness generator without either tool.
//
// Three formats are read, all of iden3's binary container (a four-byte magic, a version, then
// sections that each carry a type and a byte size, in any order):
//
//   - .r1cs, version 1 (ReadR1CS, ParseR1CS): the field, the wire counts and the constraints
//     A·B = C as sparse linear combinations over the wires.
//   - .wtns, version 2 (ReadWitness, ParseWitness, and ParseWitnessHeader for the counts
//     alone): the full assignment of every wire.
//   - .zkey, version 1, Groth16 (ReadZKey, ParseZKey): snarkjs's proving key, its points as
//     snarkjs stores them (Montgomery form, little-endian) and the QAP's A and B coefficients;
//     ZKey.CheckR1CS ties a key to the .r1cs it was made for. sdk/circomconv converts a key to
//     zkhost's and gnark's types.
//
// The field must be the scalar field of BN254 (circom's "bn128") or of BLS12-381 (circom's
// "bls12381"); the curve is recognised from the prime in the file and reported as a gnark-crypto
// ecc.ID. Both fields have 32-byte elements, the only field size accepted.
//
// Field elements (constraint coefficients and witness values) are kept as FieldElement: the 32
// bytes exactly as the file stores them, the canonical value (not Montgomery form) in
// little-endian byte order, checked to be below the prime. They are kept as bytes rather than as
// gnark-crypto elements because the type of an element depends on the curve: a later step turns
// one into the element of its curve with fr.LittleEndian.Element from
// gnark-crypto's ecc/bn254/fr or ecc/bls12-381/fr, which does the Montgomery conversion, and
// FieldElement.BigInt gives the value for code that works on any field.
//
// R1CS.Check evaluates every constraint for a witness and names the first one that fails. Errors
// wrap the sentinel errors of this package (ErrTruncated, ErrUnsatisfied, ...), so a caller can
// tell them apart with errors.Is; an unsatisfied constraint is also an *UnsatisfiedError that
// carries its index.
//
// Every input is untrusted: a malformed file gives an error that names what is wrong, never a
// panic, and no count read from a file allocates more than the bytes that back it.
//
// The format knowledge comes from iden3's own readers and writers: r1csfile (src/r1csfile.js and
// doc/r1cs_bin_format.md), binfileutils (the section container) and snarkjs (src/wtns_utils.js,
// and for .zkey src/zkey_utils.js, src/zkey_new.js and src/groth16_prove.js).
package circom
