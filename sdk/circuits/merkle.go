package circuits

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	frposeidon2 "github.com/consensys/gnark-crypto/ecc/bls12-381/fr/poseidon2"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	bnposeidon2 "github.com/consensys/gnark-crypto/ecc/bn254/fr/poseidon2"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/permutation/poseidon2"

	"github.com/zkhost/zkhost/sdk/curve"
)

// Poseidon2 parameters of the Merkle tree's hash. gnark v0.14.0 has no default Poseidon2
// parameters for BLS12-381, so both the circuit and the native hash name them explicitly;
// the round keys are derived from them (and the curve's field) identically on both sides,
// on either curve.
const (
	poseidonWidth         = 2
	poseidonFullRounds    = 6
	poseidonPartialRounds = 50
)

// Merkle proves that the leaves Leaves[i] sit at positions Indices[i] of a Merkle tree of
// depth len(Paths[i]) whose root is Root. Root and the indices (the challenges) are
// public, the leaves and their authentication paths private. A node is the Poseidon2
// compression of its two children, left first; a leaf node is the leaf value itself.
type Merkle struct {
	Root    frontend.Variable   `gnark:",public"`
	Indices []frontend.Variable `gnark:",public"`
	Leaves  []frontend.Variable
	Paths   [][]frontend.Variable // Paths[i][l]: the sibling at level l (0: leaf level)
}

// NewMerkle returns an empty Merkle circuit with k challenges in a tree of depth d,
// ready to compile or to fill in as an assignment.
func NewMerkle(k, d int) *Merkle {
	c := &Merkle{
		Indices: make([]frontend.Variable, k),
		Leaves:  make([]frontend.Variable, k),
		Paths:   make([][]frontend.Variable, k),
	}
	for i := range c.Paths {
		c.Paths[i] = make([]frontend.Variable, d)
	}
	return c
}

// Define implements frontend.Circuit.
func (c *Merkle) Define(api frontend.API) error {
	if len(c.Indices) != len(c.Leaves) || len(c.Paths) != len(c.Leaves) {
		return fmt.Errorf("merkle: %d indices, %d leaves, %d paths: want as many of each", len(c.Indices), len(c.Leaves), len(c.Paths))
	}
	h, err := poseidon2.NewPoseidon2FromParameters(api, poseidonWidth, poseidonFullRounds, poseidonPartialRounds)
	if err != nil {
		return err
	}
	for i := range c.Leaves {
		depth := len(c.Paths[i])
		// ToBinary also constrains the index to be below 2^depth.
		bits := api.ToBinary(c.Indices[i], depth)
		node := c.Leaves[i]
		for l, sibling := range c.Paths[i] {
			// bit l of the index says whether node is the right child at level l.
			left := api.Select(bits[l], sibling, node)
			right := api.Select(bits[l], node, sibling)
			node = h.Compress(left, right)
		}
		api.AssertIsEqual(node, c.Root)
	}
	return nil
}

// Hasher is the native Poseidon2 2-to-1 compression the Merkle circuit uses, computed with
// gnark-crypto outside the circuit, over the scalars S of the circuit's curve.
type Hasher[S any, PS curve.Scalar[S]] struct {
	perm interface{ Permutation([]S) error } // gnark-crypto's fr/poseidon2 of the curve
}

// NewHasher returns the native hash of the Merkle circuit on BLS12-381.
func NewHasher() *Hasher[fr.Element, *fr.Element] {
	return &Hasher[fr.Element, *fr.Element]{perm: frposeidon2.NewPermutation(poseidonWidth, poseidonFullRounds, poseidonPartialRounds)}
}

// NewHasherBN254 returns the native hash of the Merkle circuit on BN254.
func NewHasherBN254() *Hasher[bnfr.Element, *bnfr.Element] {
	return &Hasher[bnfr.Element, *bnfr.Element]{perm: bnposeidon2.NewPermutation(poseidonWidth, poseidonFullRounds, poseidonPartialRounds)}
}

// Compress returns the parent of left and right: the right lane of the permutation of
// (left, right), plus right (feed-forward), as gnark's in-circuit Compress computes it.
func (h *Hasher[S, PS]) Compress(left, right S) S {
	state := [2]S{left, right}
	if err := h.perm.Permutation(state[:]); err != nil {
		panic(err) // unreachable: the state has the permutation's width
	}
	var out S
	PS(&out).Add(&state[1], &right)
	return out
}

// nodeKey names a tree node by its level (0: leaves) and its index within the level.
type nodeKey struct {
	level int
	index uint64
}

// SparseTree is the part of a Merkle tree that a set of challenges touches: the
// challenged leaves, every node on their paths to the root, and the siblings of those
// nodes. Siblings that are on no path stand for subtrees that are never materialized:
// their values are drawn at random, so a depth-62 tree costs only k·d hashes.
type SparseTree[S any, PS curve.Scalar[S]] struct {
	Depth int
	nodes map[nodeKey]S
	root  S
}

// NewSparseTree builds the sparse tree holding leaves at indices. Repeated indices must
// carry the same leaf. Siblings off every path are drawn from rng.
func NewSparseTree[S any, PS curve.Scalar[S]](h *Hasher[S, PS], depth int, indices []uint64, leaves []S, rng *rand.Rand) (*SparseTree[S, PS], error) {
	if len(indices) != len(leaves) {
		return nil, fmt.Errorf("merkle: %d indices but %d leaves", len(indices), len(leaves))
	}
	t := &SparseTree[S, PS]{Depth: depth, nodes: make(map[nodeKey]S)}
	level := make(map[uint64]bool)
	for i, idx := range indices {
		if depth < 64 && idx>>depth != 0 {
			return nil, fmt.Errorf("merkle: index %d does not fit a tree of depth %d", idx, depth)
		}
		k := nodeKey{0, idx}
		if v, ok := t.nodes[k]; ok && !PS(&v).Equal(&leaves[i]) {
			return nil, fmt.Errorf("merkle: index %d is given two different leaves", idx)
		}
		t.nodes[k] = leaves[i]
		level[idx] = true
	}
	for l := 0; l < depth; l++ {
		parents := make(map[uint64]bool)
		// Visit the level's nodes in a fixed order so the random siblings are deterministic.
		for _, idx := range slices.Sorted(maps.Keys(level)) {
			sib := nodeKey{l, idx ^ 1}
			if _, ok := t.nodes[sib]; !ok {
				t.nodes[sib] = randomScalar[S, PS](rng)
			}
			left, right := t.nodes[nodeKey{l, idx &^ 1}], t.nodes[nodeKey{l, idx | 1}]
			t.nodes[nodeKey{l + 1, idx >> 1}] = h.Compress(left, right)
			parents[idx>>1] = true
		}
		level = parents
	}
	t.root = t.nodes[nodeKey{depth, 0}]
	return t, nil
}

// Root returns the tree's root.
func (t *SparseTree[S, PS]) Root() S { return t.root }

// Path returns the authentication path of the leaf at index: its sibling at each level,
// from the leaf level up. The leaf must be one the tree was built with.
func (t *SparseTree[S, PS]) Path(index uint64) ([]S, error) {
	path := make([]S, t.Depth)
	for l := range path {
		v, ok := t.nodes[nodeKey{l, (index >> l) ^ 1}]
		if !ok {
			return nil, fmt.Errorf("merkle: index %d is not a leaf of this sparse tree", index)
		}
		path[l] = v
	}
	return path, nil
}

func newMerkle(p map[string]int) Spec {
	k, d := p["k"], p["d"]
	return Spec{
		Name:       "merkle",
		Params:     p,
		newCircuit: func() frontend.Circuit { return NewMerkle(k, d) },
		newAssignment: func(rng *rand.Rand, curve ecc.ID) (frontend.Circuit, error) {
			switch curve {
			case ecc.BLS12_381:
				return merkleAssignment(rng, k, d, NewHasher())
			case ecc.BN254:
				return merkleAssignment(rng, k, d, NewHasherBN254())
			}
			return nil, fmt.Errorf("circuits: merkle: no assignment over %s", curve)
		},
	}
}

// merkleAssignment draws one partition's witness: distinct random challenges, random
// leaves, and the sparse tree they define.
func merkleAssignment[S any, PS curve.Scalar[S]](rng *rand.Rand, k, d int, h *Hasher[S, PS]) (*Merkle, error) {
	indices := make([]uint64, 0, k)
	seen := make(map[uint64]bool)
	for len(indices) < k {
		idx := rng.Uint64() >> (64 - d)
		if seen[idx] && uint64(len(seen)) < uint64(1)<<d {
			continue // draw distinct challenges while the tree has leaves left
		}
		seen[idx] = true
		indices = append(indices, idx)
	}
	leaves := make([]S, k)
	for i, idx := range indices {
		leaves[i] = randomScalar[S, PS](rng)
		for j := range i {
			if indices[j] == idx {
				leaves[i] = leaves[j]
			}
		}
	}
	tree, err := NewSparseTree(h, d, indices, leaves, rng)
	if err != nil {
		return nil, err
	}
	a := NewMerkle(k, d)
	a.Root = tree.Root()
	for i, idx := range indices {
		a.Indices[i] = idx
		a.Leaves[i] = leaves[i]
		path, err := tree.Path(idx)
		if err != nil {
			return nil, err
		}
		for l := range path {
			a.Paths[i][l] = path[l]
		}
	}
	return a, nil
}
