package circomtest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"slices"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk/circom"
)

// A snarkjs powers of tau (.ptau), as snarkjs 0.7.6 writes it (src/powersoftau_new.js,
// src/powersoftau_utils.js and src/powersoftau_preparephase2.js), in iden3's binary container
// (@iden3/binfileutils: the magic "ptau", version 1, the number of sections, then each section
// as its type (uint32), its byte size (uint64) and its content, little-endian throughout):
//
//	1  header: the base field's element size n8 (uint32), its prime q (n8 bytes), the power p
//	   and the ceremony's power (uint32 each; the same here)
//	2  τⁱ·G1 for i in [0, 2^(p+1)−1)
//	3  τⁱ·G2 for i in [0, 2^p)
//	4  α·τⁱ·G1 for i in [0, 2^p)
//	5  β·τⁱ·G1 for i in [0, 2^p)
//	6  β·G2
//	7  the contributions: their count (uint32), then each one's record; zero here
//
// and, once prepared for phase 2, for every level k in [0, p], the 2^k values of the Lagrange
// basis of the domain of 2^k points at τ, L_i(τ)·G (i in [0, 2^k)), one level after another:
//
//	12 L_i(τ)·G1, with one more level, p+1, for groth16 setup's H points (see lagrangeLevel)
//	13 L_i(τ)·G2
//	14 α·L_i(τ)·G1
//	15 β·L_i(τ)·G1
//
// A point is affine, x then y, each coordinate n8 bytes little-endian in Montgomery form
// (ffjavascript's toRprLEM, which is gnark-crypto's fp.Element in memory); a G2 coordinate is
// c0 then c1; the point at infinity is all zero bytes. `snarkjs groth16 setup`
// (src/zkey_new.js) reads the header, α·G1, β·G1 and β·G2 (the first points of sections 4 to
// 6) and the prepared sections 12 to 15 (section 2 instead of 12's extra level for a domain of
// 2^s, the field's largest), and never the contributions.
const (
	ptauSectionHeader        = 1
	ptauSectionTauG1         = 2
	ptauSectionTauG2         = 3
	ptauSectionAlphaTauG1    = 4
	ptauSectionBetaTauG1     = 5
	ptauSectionBetaG2        = 6
	ptauSectionContributions = 7
	ptauSectionLagrangeG1    = 12
	ptauSectionLagrangeG2    = 13
	ptauSectionAlphaLagrange = 14
	ptauSectionBetaLagrange  = 15
)

// ptauVersion is the container's version snarkjs writes and reads.
const ptauVersion = 1

// ptauSecrets are the toxic waste of a powers of tau: whoever knows them can forge proofs for
// every key set up with it. WritePtau draws them and forgets them; the tests of this package
// choose them.
type ptauSecrets struct {
	tau, alpha, beta *big.Int
}

// WritePtau writes to path a powers of tau for curve (ecc.BN254, snarkjs's "bn128", or
// ecc.BLS12_381, "bls12381") with 2^power rows, prepared for phase 2: what `snarkjs powersoftau
// new`, one `contribute` and `prepare phase2` make, for secrets τ, α and β drawn from rand, but
// computed directly (each point is its scalar times the generator) instead of by snarkjs's
// FFTs over the group (the two compared: BENCHMARKS.md, "A powers of tau for tests"). The file
// records no contribution: it is for tests, whose keys need no ceremony, and `snarkjs groth16
// setup` reads it like any prepared powers of tau. The secrets are not kept, but nothing
// attests that: never set up a key that matters with it.
//
// power is at least 1, and below the 2-adicity of the curve's scalar field (28 for BN254, 32
// for BLS12-381), where snarkjs switches to a coset for the largest level, which this writer
// does not do. Pick it with circom.DomainSizeFor: the domain of 2^power rows that snarkjs gives
// the circuit's key. Cost: 12·2^power G1 and 3·2^power G2 points (the file's), each at most 32
// additions (mulFixedBase), on every core.
func WritePtau(path string, curve ecc.ID, power int, rand io.Reader) error {
	c, err := ptauCurveOf(curve)
	if err != nil {
		return fmt.Errorf("circomtest: WritePtau: %w", err)
	}
	var s ptauSecrets
	for _, secret := range []**big.Int{&s.tau, &s.alpha, &s.beta} {
		if *secret, err = randomScalar(rand, c.scalarField); err != nil {
			return fmt.Errorf("circomtest: WritePtau: drawing the secrets: %w", err)
		}
	}
	return writePtauFile(path, c, power, s, true)
}

// writePtauFile writes the powers of tau for s to path: prepared for phase 2, or only the
// sections 1 to 7 that `snarkjs powersoftau prepare phase2` reads.
func writePtauFile(path string, c *ptauCurve, power int, s ptauSecrets, prepared bool) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("circomtest: writing the powers of tau: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("circomtest: writing the powers of tau: %w", cerr)
		}
	}()
	w := bufio.NewWriter(f)
	if err := writePtau(w, c, power, s, prepared); err != nil {
		return fmt.Errorf("circomtest: writing the powers of tau to %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("circomtest: writing the powers of tau to %s: %w", path, err)
	}
	return nil
}

// writePtau writes the file's sections in the order snarkjs writes them.
func writePtau(w io.Writer, c *ptauCurve, power int, s ptauSecrets, prepared bool) error {
	if power < 1 || power+1 > c.twoAdicity {
		return fmt.Errorf("power %d: want 1 to %d for this curve (snarkjs's level %d of the Lagrange basis needs a domain of 2^%d)",
			power, c.twoAdicity-1, power+1, power+1)
	}
	for _, v := range []*big.Int{s.tau, s.alpha, s.beta} {
		if v.Sign() <= 0 || v.Cmp(c.scalarField) >= 0 {
			return errors.New("a secret is zero or not below the scalar field's prime")
		}
	}
	f := scalarField{c.scalarField}
	n := 1 << power

	numSections := uint32(7)
	if prepared {
		numSections = 11
	}
	head := make([]byte, 0, 12)
	head = append(head, "ptau"...)
	head = binary.LittleEndian.AppendUint32(head, ptauVersion)
	head = binary.LittleEndian.AppendUint32(head, numSections)
	if _, err := w.Write(head); err != nil {
		return err
	}
	section := func(id uint32, content []byte) error {
		var h [12]byte
		binary.LittleEndian.PutUint32(h[0:], id)
		binary.LittleEndian.PutUint64(h[4:], uint64(len(content)))
		if _, err := w.Write(h[:]); err != nil {
			return err
		}
		_, err := w.Write(content)
		return err
	}

	header := binary.LittleEndian.AppendUint32(nil, uint32(c.baseFieldSize))
	header = append(header, littleEndian(c.baseField, c.baseFieldSize)...)
	header = binary.LittleEndian.AppendUint32(header, uint32(power))
	header = binary.LittleEndian.AppendUint32(header, uint32(power)) // the ceremony's power
	if err := section(ptauSectionHeader, header); err != nil {
		return err
	}

	powers := f.powers(s.tau, 2*n-1)
	alphaPowers := f.scale(s.alpha, powers[:n])
	betaPowers := f.scale(s.beta, powers[:n])
	sections := []struct {
		id      uint32
		content func() []byte
	}{
		{ptauSectionTauG1, func() []byte { return c.g1(powers) }},
		{ptauSectionTauG2, func() []byte { return c.g2(powers[:n]) }},
		{ptauSectionAlphaTauG1, func() []byte { return c.g1(alphaPowers) }},
		{ptauSectionBetaTauG1, func() []byte { return c.g1(betaPowers) }},
		{ptauSectionBetaG2, func() []byte { return c.g2([]*big.Int{s.beta}) }},
		{ptauSectionContributions, func() []byte { return binary.LittleEndian.AppendUint32(nil, 0) }},
	}
	if prepared {
		// Every level k in [0, power] of the basis, one after another; section 12 also level
		// power+1.
		var lagrange []*big.Int
		for k := 0; k <= power; k++ {
			lagrange = append(lagrange, f.lagrangeLevel(s.tau, k, false)...)
		}
		lagrangeG1 := append(lagrange[:len(lagrange):len(lagrange)], f.lagrangeLevel(s.tau, power+1, true)...)
		sections = append(sections, []struct {
			id      uint32
			content func() []byte
		}{
			{ptauSectionLagrangeG1, func() []byte { return c.g1(lagrangeG1) }},
			{ptauSectionLagrangeG2, func() []byte { return c.g2(lagrange) }},
			{ptauSectionAlphaLagrange, func() []byte { return c.g1(f.scale(s.alpha, lagrange)) }},
			{ptauSectionBetaLagrange, func() []byte { return c.g1(f.scale(s.beta, lagrange)) }},
		}...)
	}
	// Each section's points are computed when it is written, so only one section's points
	// are in memory at a time.
	for _, sec := range sections {
		if err := section(sec.id, sec.content()); err != nil {
			return err
		}
	}
	return nil
}

// lagrangeLevel returns L_i(τ) for i in [0, 2^k): the Lagrange basis of the domain of the
// 2^k-th roots of unity ωⁱ, in that order (snarkjs takes the values as the inverse FFT of τ's
// powers, (1/n)·Σ_j τʲ·ω^(−ij), which ffjavascript returns in natural order), with snarkjs's ω
// (snarkjsRoot). Away from the domain L_i(τ) = ωⁱ·(τⁿ − 1) / (n·(τ − ωⁱ)); at τ = ωᵐ it is 1
// for i = m and 0 otherwise.
//
// truncated gives what snarkjs computes for level p+1 of section 12: it has only 2^(p+1)−1
// powers of τ, and sets the missing one, τ^(n−1), to zero before the inverse FFT, which takes
// (1/n)·ω^(−i(n−1))·τ^(n−1) = ωⁱ·τ^(n−1)/n from each value. groth16 setup uses that level's
// odd entries as the H points; the polynomial they are paired with has degree at most n−2, so
// its value is the same with and without the missing term, and snarkjs's proofs verify.
func (f scalarField) lagrangeLevel(tau *big.Int, k int, truncated bool) []*big.Int {
	n := 1 << k
	omega, _ := circom.RootsOfUnity(f.r, k)
	roots := f.powers(omega, n)
	out := make([]*big.Int, n)
	tauN := new(big.Int).Exp(tau, big.NewInt(int64(n)), f.r)
	vanishing := f.sub(tauN, big.NewInt(1)) // τⁿ − 1
	if vanishing.Sign() == 0 {
		for i := range out {
			out[i] = big.NewInt(0)
			if roots[i].Cmp(tau) == 0 {
				out[i].SetInt64(1)
			}
		}
	} else {
		nBig := big.NewInt(int64(n))
		denominators := make([]*big.Int, n)
		for i := range denominators {
			denominators[i] = f.mul(nBig, f.sub(tau, roots[i]))
		}
		inverses := f.batchInverse(denominators)
		for i := range out {
			out[i] = f.mul(f.mul(roots[i], vanishing), inverses[i])
		}
	}
	if truncated {
		// ωⁱ·τ^(n−1)/n
		last := f.mul(new(big.Int).Exp(tau, big.NewInt(int64(n-1)), f.r), new(big.Int).ModInverse(big.NewInt(int64(n)), f.r))
		for i := range out {
			out[i] = f.sub(out[i], f.mul(roots[i], last))
		}
	}
	return out
}

// scalarField is arithmetic modulo the curve's scalar field's prime r, on big.Int: the
// writer's scalars are a few per point, cheap beside the points, and one implementation
// serves both curves. Every result is a new big.Int in [0, r).
type scalarField struct{ r *big.Int }

func (f scalarField) mul(a, b *big.Int) *big.Int {
	z := new(big.Int).Mul(a, b)
	return z.Mod(z, f.r)
}

func (f scalarField) sub(a, b *big.Int) *big.Int {
	z := new(big.Int).Sub(a, b)
	return z.Mod(z, f.r)
}

// powers returns x⁰ … x^(n−1).
func (f scalarField) powers(x *big.Int, n int) []*big.Int {
	out := make([]*big.Int, n)
	out[0] = big.NewInt(1)
	for i := 1; i < n; i++ {
		out[i] = f.mul(out[i-1], x)
	}
	return out
}

// scale returns c·v_i for each v_i.
func (f scalarField) scale(c *big.Int, v []*big.Int) []*big.Int {
	out := make([]*big.Int, len(v))
	for i := range v {
		out[i] = f.mul(c, v[i])
	}
	return out
}

// batchInverse returns the inverses of v, none of them zero, with one modular inversion
// (Montgomery's trick: invert the product, then peel the factors off from the end).
func (f scalarField) batchInverse(v []*big.Int) []*big.Int {
	prefix := make([]*big.Int, len(v)) // v_0·…·v_(i−1)
	acc := big.NewInt(1)
	for i := range v {
		prefix[i] = acc
		acc = f.mul(acc, v[i])
	}
	inv := new(big.Int).ModInverse(acc, f.r)
	out := make([]*big.Int, len(v))
	for i := len(v) - 1; i >= 0; i-- {
		out[i] = f.mul(inv, prefix[i])
		inv = f.mul(inv, v[i])
	}
	return out
}

// randomScalar draws a nonzero element below r, reading 64 bytes so that reducing them
// modulo r leaves no bias worth the name.
func randomScalar(rand io.Reader, r *big.Int) (*big.Int, error) {
	var b [64]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return nil, err
	}
	v := new(big.Int).SetBytes(b[:])
	if v.Mod(v, r).Sign() == 0 {
		return nil, errors.New("the random source gave zero")
	}
	return v, nil
}

// littleEndian writes v, below 2^(8·size), as size little-endian bytes.
func littleEndian(v *big.Int, size int) []byte {
	out := v.FillBytes(make([]byte, size))
	slices.Reverse(out)
	return out
}
