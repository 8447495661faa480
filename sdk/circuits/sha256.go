package circuits

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
)

// SHA-256 constants (FIPS 180-4, 4.2.2 and 5.3.3).
var (
	sha256K = [64]uint32{
		0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
		0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
		0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
		0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
		0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
		0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
		0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
		0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
	}
	sha256H0 = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}
)

// SHA256 proves that Digest is the SHA-256 hash of a secret message of Blocks
// 64-byte blocks less the 12 bytes the padding takes in the last one
// (64·Blocks − 12 bytes, whole 32-bit words, so the padding is constant).
// Message holds the message as big-endian 32-bit words, Digest the hash as
// eight big-endian words, public.
//
// The hash works on bits, as bellperson's SHA-256 gadget does (the shape of
// Filecoin's witnesses): every word is 32 boolean wires, XOR and AND are one
// product each, and a sum mod 2³² is one bit decomposition of the integer
// sum. Nearly every wire is 0 or 1, which is the point: it is the bit-heavy
// witness of the witness-aware MSM (99.7% of the wires at b=2). About 31.1k
// constraints a block (30.2k for the first, whose state is constant): 8
// blocks fill a domain of 2^18, 33 one of 2^20, 134 one of 2^22. Not gnark's std/hash/sha2: its
// uints use lookup tables, which need gnark's commitments (zkhost refuses
// them), and its wires are bytes rather than bits.
type SHA256 struct {
	Message []frontend.Variable
	Digest  [8]frontend.Variable `gnark:",public"`
}

// SHA256Words is the number of message words of a blocks-block SHA256 circuit.
func SHA256Words(blocks int) int { return 16*blocks - 3 }

// NewSHA256 returns an empty SHA256 circuit over blocks blocks, ready to
// compile or to fill in as an assignment.
func NewSHA256(blocks int) *SHA256 {
	return &SHA256{Message: make([]frontend.Variable, SHA256Words(blocks))}
}

// bit is one bit of a word in the circuit: a Go int 0 or 1 when it is a
// constant (padding, initial state, round constants), else a variable or a
// linear expression known to be 0 or 1. Operations on constants fold, so
// they cost no constraint.
type bit = frontend.Variable

// word is a 32-bit word, least significant bit first.
type word [32]bit

func constWord(v uint32) word {
	var w word
	for i := range w {
		w[i] = int(v >> i & 1)
	}
	return w
}

func isConst(b bit) (int, bool) {
	v, ok := b.(int)
	return v, ok
}

// bits is the arithmetic of bits known to be 0 or 1 (no boolean constraints
// added: every input comes from a constrained decomposition).
type bits struct{ api frontend.API }

// and is a·b: one product, a 0/1 wire.
func (g bits) and(a, b bit) bit {
	if x, ok := isConst(a); ok {
		if x == 0 {
			return 0
		}
		return b
	}
	if y, ok := isConst(b); ok {
		if y == 0 {
			return 0
		}
		return a
	}
	return g.api.Mul(a, b)
}

// not is 1 − a: linear, no constraint.
func (g bits) not(a bit) bit {
	if x, ok := isConst(a); ok {
		return 1 - x
	}
	return g.api.Sub(1, a)
}

// xor is a + b − 2ab: one product (ab, a 0/1 wire), the rest linear.
func (g bits) xor(a, b bit) bit {
	if x, ok := isConst(a); ok {
		if x == 0 {
			return b
		}
		return g.not(b)
	}
	if y, ok := isConst(b); ok {
		if y == 0 {
			return a
		}
		return g.not(a)
	}
	return g.api.Sub(g.api.Add(a, b), g.api.Mul(2, g.api.Mul(a, b)))
}

// or is x + y for bits that are never both 1 (the two halves of ch and
// maj): linear, no constraint.
func (g bits) or(x, y bit) bit {
	if u, ok := isConst(x); ok {
		if v, ok := isConst(y); ok {
			return u + v
		}
	}
	return g.api.Add(x, y)
}

func (g bits) xor3(a, b, c word) word {
	var r word
	for i := range r {
		r[i] = g.xor(g.xor(a[i], b[i]), c[i])
	}
	return r
}

func rotr(w word, n int) word {
	var r word
	for i := range r {
		r[i] = w[(i+n)%32]
	}
	return r
}

func shr(w word, n int) word {
	var r word
	for i := range r {
		if i+n < 32 {
			r[i] = w[i+n]
		} else {
			r[i] = 0
		}
	}
	return r
}

// add returns the sum of the words mod 2^32: their integer sum (linear),
// decomposed into bits (gnark's ToBinary: one boolean wire a bit), of which
// the low 32 are kept.
func (g bits) add(ws ...word) word {
	var sum frontend.Variable = 0
	konst := uint64(0)
	for _, w := range ws {
		for i, b := range w {
			if x, ok := isConst(b); ok {
				konst += uint64(x) << i
				continue
			}
			sum = g.api.Add(sum, g.api.Mul(b, uint64(1)<<i))
		}
	}
	sum = g.api.Add(sum, konst)
	// Each word is below 2^32, so the sum of len(ws) of them is below 2^(32+extra).
	extra := 0
	for 1<<extra < len(ws) {
		extra++
	}
	all := g.api.ToBinary(sum, 32+extra)
	var r word
	copy(r[:], all[:32])
	return r
}

// compress is SHA-256's compression function over one block of 16 words.
func (g bits) compress(state [8]word, block [16]word) [8]word {
	var w [64]word
	copy(w[:], block[:])
	for t := 16; t < 64; t++ {
		s0 := g.xor3(rotr(w[t-15], 7), rotr(w[t-15], 18), shr(w[t-15], 3))
		s1 := g.xor3(rotr(w[t-2], 17), rotr(w[t-2], 19), shr(w[t-2], 10))
		w[t] = g.add(w[t-16], s0, w[t-7], s1)
	}
	a, b, c, d, e, f, gg, h := state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
	for t := 0; t < 64; t++ {
		S1 := g.xor3(rotr(e, 6), rotr(e, 11), rotr(e, 25))
		S0 := g.xor3(rotr(a, 2), rotr(a, 13), rotr(a, 22))
		var ch, maj word
		for i := range ch {
			// ch = e·f + (1−e)·g: two 0/1 products (e·(f−g) would be −1 at times).
			ch[i] = g.or(g.and(e[i], f[i]), g.and(g.not(e[i]), gg[i]))
			// maj = a·b + c·(a xor b): two 0/1 products.
			maj[i] = g.or(g.and(a[i], b[i]), g.and(c[i], g.xor(a[i], b[i])))
		}
		k := constWord(sha256K[t])
		newE := g.add(d, h, S1, ch, k, w[t])       // d + T1
		newA := g.add(h, S1, ch, k, w[t], S0, maj) // T1 + T2
		h, gg, f, e = gg, f, e, newE
		d, c, b, a = c, b, a, newA
	}
	var out [8]word
	next := [8]word{a, b, c, d, e, f, gg, h}
	for i := range out {
		out[i] = g.add(state[i], next[i])
	}
	return out
}

// Define implements frontend.Circuit.
func (c *SHA256) Define(api frontend.API) error {
	n := len(c.Message)
	if n < SHA256Words(1) || (n+3)%16 != 0 {
		return fmt.Errorf("sha256: %d message words; want 16·blocks − 3 for some blocks ≥ 1", n)
	}
	g := bits{api}
	bitLen := uint64(n) * 32
	var state [8]word
	for i := range state {
		state[i] = constWord(sha256H0[i])
	}
	for blk := 0; blk < (n+3)/16; blk++ {
		var block [16]word
		for j := range block {
			switch idx := blk*16 + j; {
			case idx < n:
				// ToBinary also constrains the word below 2^32.
				copy(block[j][:], api.ToBinary(c.Message[idx], 32))
			case idx == n:
				block[j] = constWord(0x80000000) // the padding's 1 bit, then zeros
			case idx == n+1:
				block[j] = constWord(uint32(bitLen >> 32))
			default:
				block[j] = constWord(uint32(bitLen))
			}
		}
		state = g.compress(state, block)
	}
	for i, w := range state {
		var v frontend.Variable = 0
		for j, b := range w {
			v = api.Add(v, api.Mul(b, uint64(1)<<j))
		}
		api.AssertIsEqual(v, c.Digest[i])
	}
	return nil
}

// SHA256Digest hashes message (big-endian 32-bit words) natively, with the
// standard library: the Digest that makes message a valid witness.
func SHA256Digest(message []uint32) [8]uint32 {
	buf := make([]byte, 4*len(message))
	for i, w := range message {
		binary.BigEndian.PutUint32(buf[4*i:], w)
	}
	sum := sha256.Sum256(buf)
	var d [8]uint32
	for i := range d {
		d[i] = binary.BigEndian.Uint32(sum[4*i:])
	}
	return d
}

func newSHA256(p map[string]int) Spec {
	blocks := p["b"]
	return Spec{
		Name:       "sha256",
		Params:     p,
		newCircuit: func() frontend.Circuit { return NewSHA256(blocks) },
		newAssignment: func(rng *rand.Rand, _ ecc.ID) (frontend.Circuit, error) {
			return sha256Assignment(rng, blocks), nil // words and bits: the same on every curve
		},
	}
}

// sha256Assignment draws a random message of the circuit's length and its hash.
func sha256Assignment(rng *rand.Rand, blocks int) *SHA256 {
	a := NewSHA256(blocks)
	msg := make([]uint32, len(a.Message))
	for i := range msg {
		msg[i] = rng.Uint32()
		a.Message[i] = msg[i]
	}
	for i, d := range SHA256Digest(msg) {
		a.Digest[i] = d
	}
	return a
}
