package circuits

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/curve"
)

// Curve is the curve a circuit of this package is defined over unless its Spec says
// another (Spec.On).
const Curve = ecc.BLS12_381

// Spec is one circuit of the registry with its parameters fixed. The parameters are part
// of the circuit's identity: chain with k=16 and chain with k=18 are different circuits
// with different keys, told apart by ID.
type Spec struct {
	// Name is the registry name ("chain", "merkle").
	Name string
	// Params holds every parameter of the circuit, defaults filled in.
	Params map[string]int
	// Curve is the curve the circuit is compiled for and its witnesses drawn over:
	// Curve (BLS12-381) as Lookup returns a Spec, another one of the circuit's
	// curves through On.
	Curve ecc.ID

	newCircuit    func() frontend.Circuit
	newAssignment func(rng *rand.Rand, curve ecc.ID) (frontend.Circuit, error)
}

// curveSuffix names a curve other than the default in a circuit's ID.
var curveSuffix = map[ecc.ID]string{ecc.BN254: "bn254"}

// On returns s over curve id, one of the curves zkhost proves on (curve.IDs):
// every circuit of the registry is defined over each.
func (s Spec) On(id ecc.ID) (Spec, error) {
	if !slices.Contains(curve.IDs, id) {
		return Spec{}, fmt.Errorf("circuits: %s is defined over BLS12-381 and BN254, not %s", s.Name, curve.Title(id))
	}
	s.Curve = id
	return s, nil
}

// ID returns the circuit's identity, its name followed by its parameters in name order,
// e.g. "chain-k16" or "merkle-d16-k4". Key files are named after it.
func (s Spec) ID() string {
	var b strings.Builder
	b.WriteString(s.Name)
	for _, p := range sortedKeys(s.Params) {
		fmt.Fprintf(&b, "-%s%d", p, s.Params[p])
	}
	if suffix, ok := curveSuffix[s.Curve]; ok {
		b.WriteString("-" + suffix)
	}
	return b.String()
}

// Circuit returns a fresh circuit definition to compile (frontend.Compile).
func (s Spec) Circuit() frontend.Circuit { return s.newCircuit() }

// Compile compiles the circuit for s.Curve as a rank-1 constraint system (gnark's
// *cs.R1CS of that curve's constraint package).
func (s Spec) Compile() (constraint.ConstraintSystem, error) {
	ccs, err := frontend.Compile(s.Curve.ScalarField(), r1cs.NewBuilder, s.Circuit())
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", s.ID(), err)
	}
	return ccs, nil
}

// Assignment returns the assignment of partition's witness: a valid assignment,
// deterministic in (circuit ID, partition, seed), different for every partition.
func (s Spec) Assignment(partition int, seed uint64) (frontend.Circuit, error) {
	if partition < 0 {
		return nil, fmt.Errorf("circuits: %s: negative partition index %d", s.ID(), partition)
	}
	return s.newAssignment(s.rng(partition, seed), s.Curve)
}

// Witness returns partition's full gnark witness (public and secret values) over
// s.Curve's scalar field, deterministic in (circuit ID, partition, seed).
func (s Spec) Witness(partition int, seed uint64) (witness.Witness, error) {
	a, err := s.Assignment(partition, seed)
	if err != nil {
		return nil, err
	}
	w, err := frontend.NewWitness(a, s.Curve.ScalarField())
	if err != nil {
		return nil, fmt.Errorf("circuits: %s: partition %d: %w", s.ID(), partition, err)
	}
	return w, nil
}

// rng returns the random stream of one partition's witness, seeded from the circuit ID,
// the partition index and the seed, so that witnesses never depend on call order.
func (s Spec) rng(partition int, seed uint64) *rand.Rand {
	h := sha256.New()
	// The domain string keeps the package's old path: witnesses stay the same as before the move.
	h.Write([]byte("zkhost/examples/circuits witness\x00"))
	h.Write([]byte(s.ID()))
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[0:], uint64(partition))
	binary.LittleEndian.PutUint64(buf[8:], seed)
	h.Write(buf[:])
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return rand.New(rand.NewChaCha8(key))
}

// randomElement draws a uniformly distributed BLS12-381 scalar (up to a negligible
// bias).
func randomElement(rng *rand.Rand) fr.Element { return randomScalar[fr.Element](rng) }

// randomScalar draws a uniformly distributed scalar of any curve (up to a negligible
// bias): 48 random bytes, big-endian, reduced modulo r.
func randomScalar[S any, PS curve.Scalar[S]](rng *rand.Rand) S {
	var b [48]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	var e S
	PS(&e).SetBigInt(new(big.Int).SetBytes(b[:])) // reduces modulo r
	return e
}

// param describes one parameter of a circuit.
type param struct {
	name     string
	def      int // default value
	min, max int // inclusive bounds
	doc      string
}

// entry is a circuit of the registry.
type entry struct {
	doc    string
	params []param
	build  func(p map[string]int) Spec
}

// registry is a table of the example circuits; its entries are alike in
// shape, deliberately, as a test table's rows are.
var registry = map[string]entry{
	"chain": {
		doc: "2^k squaring constraints x ← x² + 7, one public output",
		params: []param{
			{name: "k", def: 10, min: 1, max: 28, doc: "log2 of the number of constraints"},
		},
		build: newChain,
	},
	"merkle": {
		doc: "k challenged leaves of a depth-d Poseidon2 Merkle tree with a public root",
		params: []param{
			{name: "k", def: 4, min: 1, max: 1024, doc: "number of challenged leaves"},
			{name: "d", def: 16, min: 1, max: 62, doc: "depth of the tree (2^d leaves)"},
		},
		build: newMerkle,
	},
	"sha256": {
		doc: "SHA-256 of a secret b-block message, public digest, on bit wires (~31k constraints a block, 99.7% of the wires 0 or 1)",
		params: []param{
			{name: "b", def: 1, min: 1, max: 1024, doc: "64-byte blocks hashed (8 fill a 2^18 domain, 33 2^20, 134 2^22)"},
		},
		build: newSHA256,
	},
}

// Names returns the names of the registered circuits, sorted.
func Names() []string { return sortedKeys(registry) }

// Describe returns a one-line description of the named circuit and its parameters with
// their defaults, for command-line help.
func Describe(name string) (string, error) {
	e, ok := registry[name]
	if !ok {
		return "", unknown(name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", name, e.doc)
	for _, p := range e.params {
		fmt.Fprintf(&b, "; %s: %s (default %d, %d..%d)", p.name, p.doc, p.def, p.min, p.max)
	}
	return b.String(), nil
}

// ParamNames returns the names of the named circuit's parameters.
func ParamNames(name string) ([]string, error) {
	e, ok := registry[name]
	if !ok {
		return nil, unknown(name)
	}
	var names []string
	for _, p := range e.params {
		names = append(names, p.name)
	}
	return names, nil
}

// Lookup returns the named circuit with the given parameters; parameters left out take
// their defaults and params may be nil. An unknown name, an unknown parameter or a value
// out of range is an error that says what is allowed.
func Lookup(name string, params map[string]int) (Spec, error) {
	e, ok := registry[name]
	if !ok {
		return Spec{}, unknown(name)
	}
	values := make(map[string]int, len(e.params))
	known := make([]string, 0, len(e.params))
	for _, p := range e.params {
		known = append(known, p.name)
		v, given := params[p.name]
		if !given {
			v = p.def
		}
		if v < p.min || v > p.max {
			return Spec{}, fmt.Errorf("circuits: %s: parameter %s = %d is out of range %d..%d", name, p.name, v, p.min, p.max)
		}
		values[p.name] = v
	}
	for _, k := range sortedKeys(params) {
		if !slices.Contains(known, k) {
			return Spec{}, fmt.Errorf("circuits: %s has no parameter %q (its parameters: %s)", name, k, strings.Join(known, ", "))
		}
	}
	s := e.build(values)
	s.Curve = Curve
	return s, nil
}

var idPart = regexp.MustCompile(`^([a-z]+)([0-9]+)$`)

// FromID returns the circuit an ID names ("chain-k16", "merkle-d16-k4",
// "chain-k16-bn254"), the inverse of Spec.ID. Every parameter must be present, so that
// an ID names exactly one circuit.
func FromID(id string) (Spec, error) {
	parts := strings.Split(id, "-")
	onCurve := Curve
	for c, suffix := range curveSuffix {
		if len(parts) > 1 && parts[len(parts)-1] == suffix {
			onCurve, parts = c, parts[:len(parts)-1]
		}
	}
	name := parts[0]
	e, ok := registry[name]
	if !ok {
		return Spec{}, unknown(name)
	}
	params := make(map[string]int)
	for _, part := range parts[1:] {
		m := idPart.FindStringSubmatch(part)
		if m == nil {
			return Spec{}, fmt.Errorf("circuits: bad circuit ID %q: %q is not a parameter name followed by a value", id, part)
		}
		v, err := strconv.Atoi(m[2])
		if err != nil {
			return Spec{}, fmt.Errorf("circuits: bad circuit ID %q: %w", id, err)
		}
		params[m[1]] = v
	}
	if len(params) != len(e.params) {
		names, _ := ParamNames(name)
		return Spec{}, fmt.Errorf("circuits: circuit ID %q must give every parameter of %s (%s)", id, name, strings.Join(names, ", "))
	}
	s, err := Lookup(name, params)
	if err != nil {
		return Spec{}, err
	}
	if s, err = s.On(onCurve); err != nil {
		return Spec{}, err
	}
	if s.ID() != id {
		return Spec{}, fmt.Errorf("circuits: circuit ID %q is not canonical, want %q", id, s.ID())
	}
	return s, nil
}

func unknown(name string) error {
	return fmt.Errorf("circuits: unknown circuit %q (known: %s)", name, strings.Join(Names(), ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
