package circom

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
)

// Section types of a snarkjs .zkey file (snarkjs's src/zkey_utils.js).
const (
	zkeySectionHeader        = 1 // the protocol: 1 for Groth16
	zkeySectionGroth16       = 2 // fields, counts, the verifying key's fixed points
	zkeySectionIC            = 3
	zkeySectionCoefficients  = 4
	zkeySectionA             = 5
	zkeySectionB1            = 6
	zkeySectionB2            = 7
	zkeySectionC             = 8
	zkeySectionH             = 9
	zkeySectionContributions = 10 // the ceremony's transcript; not needed to prove
)

// zkeyVersion is the version snarkjs writes (zkey new, contribute, beacon all write 1).
const zkeyVersion = 1

// groth16Protocol is the protocol id of a Groth16 zkey; snarkjs also writes PLONK (2) and
// FFLONK (10) keys in the same container.
const groth16Protocol = 1

// coefficientSize is the size of one entry of the coefficients section: matrix, constraint and
// signal (uint32 each), then the value.
const coefficientSize = 12 + FieldElementSize

// ZKey is a snarkjs Groth16 proving key (.zkey, as `snarkjs groth16 setup` and `zkey contribute`
// write it).
//
// Points are kept as snarkjs stores them, because their type depends on the curve: affine, x then
// y, each coordinate little-endian in Montgomery form with R = 2^(8·BaseFieldSize) (the layout of
// gnark-crypto's fp.Element in memory, on both curves), a G2 coordinate as c0 then c1, and the
// point at infinity as all zero bytes. Every coordinate is checked to be below the base field's
// prime; whether a point is on the curve is for the code that converts it to a curve type. Each
// point field holds its points one after another, G1Size (G2Size) bytes each, aliasing the
// parsed bytes.
//
// The proof snarkjs computes with a key, and so what each section means:
//
//	pi_a = alpha1 + Σ w_i·A_i + r·delta1                       (A: every wire)
//	pi_b = beta2 + Σ w_i·B2_i + s·delta2                       (B2: every wire; B1 the same in G1)
//	pi_c = Σ w_i·C_i + Σ h_j·H_j + s·pi_a + r·pib1 − rs·delta1  (C: private wires only)
//
// where h_j are the scalars of snarkjs's H computation (refprover's SnarkjsH says how they are
// computed), and IC are the public wires' points of the verifying key.
type ZKey struct {
	Curve       ecc.ID
	BaseField   *big.Int // q, the coordinates' field
	ScalarField *big.Int // r, the witness's field

	NumVars    uint32 // wires, wire 0 included: the length of a witness
	NumPublic  uint32 // public values (outputs and public inputs), wire 0 not included
	DomainSize uint32 // the QAP's evaluation domain, a power of two

	BaseFieldSize  int // bytes of a coordinate: 32 for BN254, 48 for BLS12-381
	G1Size, G2Size int // bytes of a point: 2 and 4 coordinates

	Alpha1, Beta1, Delta1 []byte // one G1 point each
	Beta2, Gamma2, Delta2 []byte // one G2 point each

	IC []byte // NumPublic+1 G1 points, one per public wire and wire 0
	A  []byte // NumVars G1 points
	B1 []byte // NumVars G1 points
	B2 []byte // NumVars G2 points
	C  []byte // NumVars-NumPublic-1 G1 points, the private wires in wire order
	H  []byte // DomainSize G1 points

	// Coefficients are the nonzero entries of the QAP's A and B matrices, sorted by row as
	// snarkjs writes them: the A and B terms of every r1cs constraint (row = the constraint's
	// index), then for each public wire s (wire 0 included) an A term of value 1 in row
	// NumConstraints+s, which ties the public values to the proof. C is not stored: snarkjs's
	// prover takes C = A∘B row by row.
	Coefficients []Coefficient
}

// Coefficient is one entry of the QAP's A or B matrix.
type Coefficient struct {
	Matrix     uint32 // 0 for A, 1 for B
	Constraint uint32 // the row, below DomainSize
	Signal     uint32 // the wire, below NumVars
	// Value is the canonical value. snarkjs stores v·R² mod r (R = 2^256), so that one
	// Montgomery multiplication by a witness value in plain form gives v·w in Montgomery form;
	// the reader divides by R² to give v.
	Value FieldElement
}

// ReadZKey reads a snarkjs .zkey file.
func ReadZKey(path string) (*ZKey, error) { return readFile(path, ParseZKey) }

// ParseZKey parses the bytes of a Groth16 .zkey file. The point fields of the result alias data.
// It refuses keys of other protocols (PLONK, FFLONK), a field that is neither BN254's nor
// BLS12-381's, counts that disagree with the sections' sizes, coordinates not below the base
// field's prime, and coefficients outside the matrices' bounds or not below the scalar field's
// prime.
func ParseZKey(data []byte) (*ZKey, error) {
	f, err := parseBinFile(data, "zkey", zkeyVersion)
	if err != nil {
		return nil, err
	}
	header, _, err := f.uniqueSection(zkeySectionHeader, "header", true)
	if err != nil {
		return nil, err
	}
	r := byteReader{data: header, what: "zkey header section"}
	protocol, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if err := r.expectEnd(); err != nil {
		return nil, err
	}
	if protocol != groth16Protocol {
		return nil, fmt.Errorf("%w: the zkey is for protocol %d (%s), not Groth16 (1)", ErrProtocol, protocol, protocolName(protocol))
	}

	groth16, _, err := f.uniqueSection(zkeySectionGroth16, "Groth16 header", true)
	if err != nil {
		return nil, err
	}
	k, err := parseGroth16Header(groth16)
	if err != nil {
		return nil, err
	}

	// The point sections, each with the count the header implies.
	for _, s := range []struct {
		sectionType uint32
		name        string
		dst         *[]byte
		count       uint64
		size        int
	}{
		{zkeySectionIC, "IC", &k.IC, uint64(k.NumPublic) + 1, k.G1Size},
		{zkeySectionA, "A", &k.A, uint64(k.NumVars), k.G1Size},
		{zkeySectionB1, "B1", &k.B1, uint64(k.NumVars), k.G1Size},
		{zkeySectionB2, "B2", &k.B2, uint64(k.NumVars), k.G2Size},
		{zkeySectionC, "C", &k.C, uint64(k.NumVars) - uint64(k.NumPublic) - 1, k.G1Size},
		{zkeySectionH, "H", &k.H, uint64(k.DomainSize), k.G1Size},
	} {
		content, _, err := f.uniqueSection(s.sectionType, s.name, true)
		if err != nil {
			return nil, err
		}
		if want := s.count * uint64(s.size); uint64(len(content)) != want {
			return nil, fmt.Errorf("%w: %s section of %d bytes, want %d for %d points of %d bytes",
				ErrSections, s.name, len(content), want, s.count, s.size)
		}
		if err := k.checkCoordinates(content, s.size, s.name+" section"); err != nil {
			return nil, err
		}
		*s.dst = content
	}

	coefficients, _, err := f.uniqueSection(zkeySectionCoefficients, "coefficients", true)
	if err != nil {
		return nil, err
	}
	if k.Coefficients, err = parseCoefficients(coefficients, k); err != nil {
		return nil, err
	}
	return k, nil
}

// protocolName names the protocols snarkjs keeps in .zkey files, for the error that refuses them.
func protocolName(id uint32) string {
	switch id {
	case 2:
		return "PLONK"
	case 10:
		return "FFLONK"
	}
	return "unknown"
}

// parseGroth16Header reads the Groth16 header section: the base field (size, prime), the scalar
// field (size, prime), the counts, then alpha1, beta1, beta2, gamma2, delta1 and delta2.
func parseGroth16Header(content []byte) (*ZKey, error) {
	r := byteReader{data: content, what: "zkey Groth16 header section"}
	baseSize, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if baseSize != 32 && baseSize != 48 {
		return nil, fmt.Errorf("%w: %s: base field elements of %d bytes, want 32 (BN254) or 48 (BLS12-381)", ErrFieldSize, r.what, baseSize)
	}
	qBytes, err := r.bytes(int(baseSize))
	if err != nil {
		return nil, err
	}
	scalar, err := readFieldHeader(&r)
	if err != nil {
		return nil, err
	}
	k := &ZKey{
		Curve:         scalar.curve,
		BaseField:     littleEndianInt(qBytes),
		ScalarField:   scalar.prime,
		BaseFieldSize: int(baseSize),
		G1Size:        2 * int(baseSize),
		G2Size:        4 * int(baseSize),
	}
	if want := k.Curve.BaseField(); k.BaseField.Cmp(want) != 0 {
		return nil, fmt.Errorf("%w: %s: base field %s is not %s's (%s)", ErrUnknownPrime, r.what, k.BaseField, k.Curve, want)
	}
	if want := (k.BaseField.BitLen() + 63) / 64 * 8; want != k.BaseFieldSize {
		return nil, fmt.Errorf("%w: %s: base field elements of %d bytes, %s's take %d", ErrFieldSize, r.what, k.BaseFieldSize, k.Curve, want)
	}
	for _, count := range []*uint32{&k.NumVars, &k.NumPublic, &k.DomainSize} {
		if *count, err = r.uint32(); err != nil {
			return nil, err
		}
	}
	if uint64(k.NumPublic)+1 > uint64(k.NumVars) {
		return nil, fmt.Errorf("%w: %s: %d wires cannot hold wire 0 and %d public values", ErrWireIndex, r.what, k.NumVars, k.NumPublic)
	}
	if k.DomainSize == 0 || k.DomainSize&(k.DomainSize-1) != 0 {
		return nil, fmt.Errorf("%w: %s: domain size %d is not a power of two", ErrSections, r.what, k.DomainSize)
	}
	// The public wires take rows of their own after the constraints, so the domain holds them.
	if uint64(k.NumPublic)+1 > uint64(k.DomainSize) {
		return nil, fmt.Errorf("%w: %s: domain size %d cannot hold the rows of %d public wires", ErrSections, r.what, k.DomainSize, k.NumPublic+1)
	}
	for _, p := range []struct {
		dst  *[]byte
		size int
		name string
	}{
		{&k.Alpha1, k.G1Size, "alpha1"}, {&k.Beta1, k.G1Size, "beta1"}, {&k.Beta2, k.G2Size, "beta2"},
		{&k.Gamma2, k.G2Size, "gamma2"}, {&k.Delta1, k.G1Size, "delta1"}, {&k.Delta2, k.G2Size, "delta2"},
	} {
		r.what = "zkey Groth16 header section, " + p.name
		if *p.dst, err = r.bytes(p.size); err != nil {
			return nil, err
		}
		if err := k.checkCoordinates(*p.dst, p.size, r.what); err != nil {
			return nil, err
		}
	}
	r.what = "zkey Groth16 header section"
	if err := r.expectEnd(); err != nil {
		return nil, err
	}
	return k, nil
}

// checkCoordinates checks that every coordinate in points (a run of whole points) is below the
// base field's prime, comparing little-endian bytes from the most significant end: a
// Montgomery representation is a residue, so one at or above the prime was not written by
// snarkjs. Its error names the point by its index in what.
func (k *ZKey) checkCoordinates(points []byte, pointSize int, what string) error {
	q := littleEndianBytes(k.BaseField, k.BaseFieldSize)
	size := k.BaseFieldSize
	for off := 0; off+size <= len(points); off += size {
		if !lessLittleEndian(points[off:off+size], q) {
			return fmt.Errorf("%w: %s, point %d: a coordinate is not below the base field's prime",
				ErrNotCanonical, what, off/pointSize)
		}
	}
	return nil
}

// lessLittleEndian reports whether a < b, both little-endian of the same length.
func lessLittleEndian(a, b []byte) bool {
	for i := len(a) - 1; i >= 0; i-- {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// parseCoefficients reads the coefficients section: a count (uint32), then that many entries of
// matrix, constraint, signal (uint32 each) and value (v·R² mod r, little-endian).
func parseCoefficients(content []byte, k *ZKey) ([]Coefficient, error) {
	r := byteReader{data: content, what: "zkey coefficients section"}
	n, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if uint64(n)*coefficientSize != uint64(r.remaining()) {
		return nil, fmt.Errorf("%w: coefficients section holds %d bytes after its count, want %d for %d coefficients",
			ErrSections, r.remaining(), uint64(n)*coefficientSize, n)
	}
	// R² mod r undoes as a multiplication by R⁻² mod r.
	rInv2 := new(big.Int).Lsh(big.NewInt(1), 8*FieldElementSize)
	rInv2.ModInverse(rInv2, k.ScalarField)
	rInv2.Mul(rInv2, rInv2).Mod(rInv2, k.ScalarField)

	out := make([]Coefficient, n)
	scratch := new(big.Int)
	for i := range out {
		r.what = fmt.Sprintf("zkey coefficient %d", i)
		c := &out[i]
		c.Matrix, _ = r.uint32()
		c.Constraint, _ = r.uint32()
		c.Signal, _ = r.uint32()
		switch {
		case c.Matrix > 1:
			return nil, fmt.Errorf("%w: %s: matrix %d, want 0 (A) or 1 (B)", ErrSections, r.what, c.Matrix)
		case c.Constraint >= k.DomainSize:
			return nil, fmt.Errorf("%w: %s: row %d, the domain has %d", ErrSections, r.what, c.Constraint, k.DomainSize)
		case c.Signal >= k.NumVars:
			return nil, fmt.Errorf("%w: %s: wire %d, the key has %d wires", ErrWireIndex, r.what, c.Signal, k.NumVars)
		}
		stored, err := readFieldElement(&r, k.ScalarField, scratch)
		if err != nil {
			return nil, err
		}
		stored.setBigInt(scratch)
		scratch.Mul(scratch, rInv2).Mod(scratch, k.ScalarField)
		copy(c.Value[:], littleEndianBytes(scratch, FieldElementSize))
	}
	return out, nil
}

// littleEndianInt reads an unsigned little-endian integer.
func littleEndianInt(b []byte) *big.Int {
	bigEndian := make([]byte, len(b))
	for i := range b {
		bigEndian[len(b)-1-i] = b[i]
	}
	return new(big.Int).SetBytes(bigEndian)
}

// littleEndianBytes writes v, below 2^(8·size), as size little-endian bytes.
func littleEndianBytes(v *big.Int, size int) []byte {
	out := make([]byte, size)
	b := v.Bytes()
	for i := range b {
		out[i] = b[len(b)-1-i]
	}
	return out
}

// NumRows is the number of rows of the QAP a key for cs has: one per constraint, then one per
// public wire, wire 0 included.
func NumRows(cs *R1CS) uint64 {
	return uint64(len(cs.Constraints)) + uint64(cs.NumPublic()) + 1
}

// DomainSizeFor is the domain snarkjs gives a key for cs: the smallest power of two that holds
// NumRows(cs) (snarkjs's zkey_new.js).
func DomainSizeFor(cs *R1CS) uint64 {
	n := uint64(1)
	for n < NumRows(cs) {
		n <<= 1
	}
	return n
}

// CheckR1CS checks that the key was made for cs: the same field, the same wire and public
// counts, the domain snarkjs would choose, and coefficients that are exactly the A and B terms
// of cs's constraints followed by the public wires' rows, in the order snarkjs writes them
// (constraint by constraint, A's terms then B's, each in the r1cs's order). Its error names the
// first thing that differs: a key from another circuit, another compilation of the same circuit,
// or a file damaged on the way.
func (k *ZKey) CheckR1CS(cs *R1CS) error {
	switch {
	case k.ScalarField.Cmp(cs.Prime) != 0:
		return fmt.Errorf("%w: the zkey is for the %s field, the r1cs for the %s field", ErrKeyMismatch, k.Curve, cs.Curve)
	case k.NumVars != cs.NumWires:
		return fmt.Errorf("%w: the zkey has %d wires, the r1cs %d", ErrKeyMismatch, k.NumVars, cs.NumWires)
	case int(k.NumPublic) != cs.NumPublic():
		return fmt.Errorf("%w: the zkey has %d public values, the r1cs %d (%d outputs, %d public inputs)",
			ErrKeyMismatch, k.NumPublic, cs.NumPublic(), cs.NumPublicOutputs, cs.NumPublicInputs)
	case uint64(k.DomainSize) != DomainSizeFor(cs):
		return fmt.Errorf("%w: the zkey's domain has %d rows, the r1cs's %d constraints and %d public wires need %d",
			ErrKeyMismatch, k.DomainSize, len(cs.Constraints), cs.NumPublic()+1, DomainSizeFor(cs))
	}
	var one FieldElement
	one[0] = 1
	i := 0
	// next compares the key's next coefficient with the one the r1cs gives.
	next := func(want Coefficient, where string) error {
		if i >= len(k.Coefficients) {
			return fmt.Errorf("%w: the zkey has %d coefficients, the r1cs gives more (the first missing is %s)",
				ErrKeyMismatch, len(k.Coefficients), where)
		}
		if got := k.Coefficients[i]; got != want {
			return fmt.Errorf("%w: zkey coefficient %d is %s row %d, wire %d, value %s; the r1cs's %s is %s row %d, wire %d, value %s",
				ErrKeyMismatch, i, "AB"[got.Matrix:got.Matrix+1], got.Constraint, got.Signal, got.Value.BigInt(),
				where, "AB"[want.Matrix:want.Matrix+1], want.Constraint, want.Signal, want.Value.BigInt())
		}
		i++
		return nil
	}
	for c := range cs.Constraints {
		for m, lc := range []LinearCombination{cs.Constraints[c].A, cs.Constraints[c].B} {
			for t, term := range lc {
				where := fmt.Sprintf("constraint %d, %c term %d", c, "AB"[m], t)
				if err := next(Coefficient{Matrix: uint32(m), Constraint: uint32(c), Signal: term.Wire, Value: term.Coefficient}, where); err != nil {
					return err
				}
			}
		}
	}
	for s := 0; s <= cs.NumPublic(); s++ {
		row := uint32(len(cs.Constraints) + s)
		if err := next(Coefficient{Matrix: 0, Constraint: row, Signal: uint32(s), Value: one}, fmt.Sprintf("public wire %d's row", s)); err != nil {
			return err
		}
	}
	if i != len(k.Coefficients) {
		return fmt.Errorf("%w: the zkey has %d coefficients, the r1cs gives %d", ErrKeyMismatch, len(k.Coefficients), i)
	}
	return nil
}
