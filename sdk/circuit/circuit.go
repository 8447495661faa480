package circuit

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk"
	zkcurve "github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/solve"
	"github.com/zkhost/zkhost/sdk/solvebn254"
)

// File name extensions of a circuit's files in a key directory.
const (
	ExtCCS  = ".ccs"
	ExtVK   = ".vk"
	ExtPK   = ".pk"
	ExtMeta = ".json"
)

// MetadataVersion is the version of the NAME.json format this package writes.
const MetadataVersion = 1

// Metadata is the content of NAME.json: what the circuit is and the digests that tie its
// three key files together.
type Metadata struct {
	Version       int            `json:"version"`
	ID            string         `json:"id"`      // key name, e.g. "chain-k16"
	Circuit       string         `json:"circuit"` // registry name, e.g. "chain"
	Params        map[string]int `json:"params"`
	Curve         string         `json:"curve"` // "bls12-381" or "bn254" (sdk.Curve's words)
	NbConstraints int            `json:"nb_constraints"`
	NbWires       int            `json:"nb_wires"`
	NbPublic      int            `json:"nb_public"` // public wires, including the constant-1 wire
	NbSecret      int            `json:"nb_secret"` // secret inputs (not internal wires)
	DomainSize    uint64         `json:"domain_size"`
	Setup         string         `json:"setup"`     // how the keys were made, e.g. "development"
	PKDigest      string         `json:"pk_digest"` // hex keyfile header digest of NAME.pk
	CCSSHA256     string         `json:"ccs_sha256"`
	VKSHA256      string         `json:"vk_sha256"`
}

// Circuit is a loaded circuit: its constraint system, verifying key, and its proving key
// file mapped read-only. Close it to unmap the key.
type Circuit struct {
	Name   string // key name, the files' base name
	KeyDir string

	// System is the constraint system, gnark's R1CS of the circuit's curve (a
	// *cs.R1CS of constraint/bls12-381 or constraint/bn254).
	System constraint.ConstraintSystem
	// CCS is System for a BLS12-381 circuit, nil for another curve's: what the
	// functions whose vectors are BLS12-381 scalars read (sdk/solve's solver,
	// SynthesizeInto, ParseAssignment). The partition checks (sdk/partcheck)
	// and compact wire assignments take either curve.
	CCS *cs.R1CS
	VK  groth16.VerifyingKey // gnark's verifying key of the circuit's curve
	// Curve is the curve the circuit is proved on, set where its constraint
	// system is checked to be that curve's: what the host writes in each
	// partition and asks of the backends that prove it.
	Curve sdk.Curve

	PKPath   string
	PKDigest [32]byte // keyfile header digest: the proving key's identity

	NbConstraints int
	NbWires       int    // len(W)
	NbPublic      int    // public wires including the constant-1 wire
	NbSecret      int    // secret inputs
	DomainSize    uint64 // FFT domain, the power of two ≥ NbConstraints

	Meta *Metadata // NAME.json, or nil for keys without one

	// MissingHints names the hints the constraint system's solver needs that this
	// build does not have (sorted): its partitions cannot be solved from a witness,
	// only proved from wire assignments solved elsewhere. Empty for most circuits.
	MissingHints []string

	pk  *keyfile.File
	key any // pk's key: a *keyfile.BLS12381Key or *keyfile.BN254Key

	// The solver's program, compiled from the constraint system on the first
	// Synthesize: program for BLS12-381 (CCS), programBN254 for BN254.
	programOnce  sync.Once
	program      *solve.Program
	programBN254 *solvebn254.Program
}

// Program returns c's constraint system compiled for the fast solver
// (sdk/solve), compiling it on the first call, or nil when the solver does not
// handle the system (Synthesize then runs gnark's solver). A BN254 system is
// compiled too, for sdk/solvebn254 (bn254Program), and Program is then nil.
func (c *Circuit) Program() *solve.Program {
	c.compilePrograms()
	return c.program
}

// bn254Program is Program for a BN254 circuit: nil for another curve's, or
// when the solver does not handle the system.
func (c *Circuit) bn254Program() *solvebn254.Program {
	c.compilePrograms()
	return c.programBN254
}

// SolverParallelShare is the share of the solver's work that runs in wide
// levels (solve.Program.ParallelShare), compiling the program on the first
// call; 0 when gnark's solver runs the system.
func (c *Circuit) SolverParallelShare() float64 {
	c.compilePrograms()
	switch {
	case c.program != nil:
		return c.program.ParallelShare()
	case c.programBN254 != nil:
		return c.programBN254.ParallelShare()
	}
	return 0
}

// compilePrograms compiles c's constraint system for its curve's solver, once.
func (c *Circuit) compilePrograms() {
	c.programOnce.Do(func() {
		switch r := c.System.(type) {
		case *cs.R1CS:
			if p, err := solve.Compile(r); err == nil {
				c.program = p
			}
		case *cs_bn254.R1CS:
			if p, err := solvebn254.Compile(r); err == nil {
				c.programBN254 = p
			}
		}
	})
}

// Key returns the mapped proving key, for in-process proving and tests. Its slices are
// valid until Close.
// It is nil for a circuit of another curve (GnarkProvingKey serves both).
func (c *Circuit) Key() *keyfile.BLS12381Key {
	k, _ := c.key.(*keyfile.BLS12381Key)
	return k
}

// field returns the modulus of c's scalar field.
func (c *Circuit) field() *big.Int { return c.curveID().ScalarField() }

// curveTitle returns c's curve as messages name it ("BLS12-381").
func (c *Circuit) curveTitle() string { return zkcurve.Title(c.curveID()) }

// curveID returns c's curve as gnark names it: Load sets c.Curve to one of
// zkcurve.IDs' names; a Circuit made by hand without one is BLS12-381's, the
// curve of every key set before BN254.
func (c *Circuit) curveID() ecc.ID {
	if id, err := zkcurve.Parse(string(c.Curve)); err == nil {
		return id
	}
	return ecc.BLS12_381
}

// Close unmaps the proving key. The circuit's key must not be used afterwards.
func (c *Circuit) Close() error {
	if c.pk == nil {
		return nil
	}
	return c.pk.Close()
}

// PKDigestHex returns PKDigest in hex, as NAME.json and logs spell it.
func (c *Circuit) PKDigestHex() string { return hex.EncodeToString(c.PKDigest[:]) }

// Paths returns the paths of circuit name's files in keyDir: ccs, vk, pk, metadata.
func Paths(keyDir, name string) (ccs, vk, pk, meta string) {
	base := filepath.Join(keyDir, name)
	return base + ExtCCS, base + ExtVK, base + ExtPK, base + ExtMeta
}

// ErrCommitments is returned (wrapped) for circuits that use gnark's commitments.
var ErrCommitments = errors.New("circuits with commitments (gnark's Commit API) are not supported: zkhost's proving split has no Pedersen commitment step")

// Load reads circuit name from keyDir: it decodes NAME.ccs and NAME.vk, maps NAME.pk and
// verifies every section digest (reading the whole key once), and checks the three agree
// with each other (sizes, and the pk's alpha, beta, delta against the vk's) and with
// NAME.json's digests when that file exists. Its errors name the file and the problem.
func Load(keyDir, name string) (*Circuit, error) {
	if name == "" || filepath.Base(name) != name {
		return nil, fmt.Errorf("circuit: bad circuit name %q (want a plain file base name)", name)
	}
	ccsPath, vkPath, pkPath, metaPath := Paths(keyDir, name)
	c := &Circuit{Name: name, KeyDir: keyDir, PKPath: pkPath}

	meta, err := readMetadata(metaPath)
	if err != nil {
		return nil, err
	}
	c.Meta = meta

	ccsSum, err := readCCS(ccsPath, c)
	if err != nil {
		return nil, err
	}
	vkSum, err := readVK(vkPath, c)
	if err != nil {
		return nil, err
	}
	if meta != nil {
		if err := checkSum(ccsPath, ccsSum, meta.CCSSHA256, metaPath); err != nil {
			return nil, err
		}
		if err := checkSum(vkPath, vkSum, meta.VKSHA256, metaPath); err != nil {
			return nil, err
		}
	}

	f, err := keyfile.Open(pkPath)
	if err != nil {
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	if err := f.Verify(); err != nil {
		f.Close()
		return nil, fmt.Errorf("circuit %s: %w", name, err)
	}
	c.pk = f
	c.PKDigest = f.HeaderDigest()
	if err := c.checkConsistent(Paths(keyDir, name)); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// readMetadata reads NAME.json; a missing file gives (nil, nil).
func readMetadata(path string) (*Metadata, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("circuit: %w", err)
	}
	var m Metadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("circuit: %s: bad metadata: %w", path, err)
	}
	if m.Version != MetadataVersion {
		return nil, fmt.Errorf("circuit: %s: metadata version %d, this build reads %d", path, m.Version, MetadataVersion)
	}
	return &m, nil
}

func checkSum(path string, got [32]byte, want, metaPath string) error {
	if hex.EncodeToString(got[:]) != want {
		return fmt.Errorf("circuit: %s: SHA-256 %x does not match %s (%s): the files are not one key set", path, got, metaPath, want)
	}
	return nil
}

// readCCS decodes path into c.CCS and fills c's sizes; it returns the file's SHA-256.
func readCCS(path string, c *Circuit) (sum [32]byte, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return sum, fmt.Errorf("circuit: %w", err)
	}
	// gnark's decoder allocates the length it reads before checking it: check it first.
	if len(data) < 32 || binary.LittleEndian.Uint64(data) != uint64(len(data)-32) {
		return sum, fmt.Errorf("circuit: %s is not a gnark constraint system (bad length header or truncated)", path)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("circuit: %s is not a valid gnark constraint system: decoder failed: %v", path, r)
		}
	}()
	// CurveID is the decoder's type, not the file's: a constraint system compiled for
	// another curve decodes all the same (BN254's scalars are below BLS12-381's
	// modulus). The field it was compiled for is in its header: decoded with
	// BLS12-381's type first, a BN254 system is decoded again with its own.
	var r1cs constraint.ConstraintSystem = new(cs.R1CS)
	if _, err := r1cs.ReadFrom(bytes.NewReader(data)); err != nil {
		return sum, fmt.Errorf("circuit: %s is not a gnark constraint system: %w", path, err)
	}
	switch field := r1cs.Field(); {
	case field.Cmp(ecc.BLS12_381.ScalarField()) == 0:
		c.CCS = r1cs.(*cs.R1CS)
		c.Curve = sdk.CurveBLS12381
	case field.Cmp(ecc.BN254.ScalarField()) == 0:
		r1cs = new(cs_bn254.R1CS)
		if _, err := r1cs.ReadFrom(bytes.NewReader(data)); err != nil {
			return sum, fmt.Errorf("circuit: %s is not a gnark BN254 constraint system: %w", path, err)
		}
		c.Curve = sdk.CurveBN254
	default:
		return sum, fmt.Errorf("circuit: %s is compiled for another field (modulus %s), want BLS12-381's or BN254's scalar field", path, field.Text(16))
	}
	if err := refuseCommitments(r1cs); err != nil {
		return sum, fmt.Errorf("circuit: %s: %w", path, err)
	}
	c.System = r1cs
	c.NbConstraints = r1cs.GetNbConstraints()
	c.NbPublic = r1cs.GetNbPublicVariables()
	c.NbSecret = r1cs.GetNbSecretVariables()
	c.NbWires = r1cs.GetNbInternalVariables() + c.NbPublic + c.NbSecret
	c.DomainSize = ecc.NextPowerOfTwo(uint64(c.NbConstraints))
	c.MissingHints = missingHints(r1cs)
	return sha256.Sum256(data), nil
}

func refuseCommitments(r1cs constraint.ConstraintSystem) error {
	if n := len(r1cs.GetCommitments().CommitmentIndexes()); n > 0 {
		return fmt.Errorf("%w (this one has %d)", ErrCommitments, n)
	}
	return nil
}

// readVK decodes path into c.VK; it returns the file's SHA-256.
func readVK(path string, c *Circuit) (sum [32]byte, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return sum, fmt.Errorf("circuit: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("circuit: %s is not a valid gnark verifying key: decoder failed: %v", path, r)
		}
	}()
	vk := groth16.NewVerifyingKey(c.curveID())
	br := bytes.NewReader(data)
	if _, err := vk.ReadFrom(br); err != nil {
		return sum, fmt.Errorf("circuit: %s is not a gnark %s verifying key: %w", path, c.curveTitle(), err)
	}
	if br.Len() != 0 {
		return sum, fmt.Errorf("circuit: %s has %d trailing bytes after the verifying key", path, br.Len())
	}
	if hasCommitments(vk) {
		return sum, fmt.Errorf("circuit: %s: %w", path, ErrCommitments)
	}
	c.VK = vk
	return sha256.Sum256(data), nil
}

// checkConsistent checks that the ccs, vk and pk (and metadata) describe one circuit and
// one setup. Its errors name the files by the paths given.
func (c *Circuit) checkConsistent(ccsPath, vkPath, pkPath, metaPath string) error {
	if c.pk.Curve() != c.curveID() {
		return fmt.Errorf("circuit %s: %s is a %s key, %s a %s constraint system: the files are not one key set", c.Name, pkPath, zkcurve.Title(c.pk.Curve()), ccsPath, c.curveTitle())
	}
	var (
		k   keyfile.Header
		err error
	)
	switch vk := c.VK.(type) {
	case *groth16_bls12381.VerifyingKey:
		k, err = sameSetup(c, func() (*keyfile.BLS12381Key, error) { return c.pk.BLS12381() },
			vk.G1.Alpha, vk.G1.Beta, vk.G1.Delta, vk.G2.Beta, vk.G2.Delta, len(vk.G1.K))
	case *groth16_bn254.VerifyingKey:
		k, err = sameSetup(c, func() (*keyfile.BN254Key, error) { return c.pk.BN254() },
			vk.G1.Alpha, vk.G1.Beta, vk.G1.Delta, vk.G2.Beta, vk.G2.Delta, len(vk.G1.K))
	default:
		err = fmt.Errorf("a verifying key of type %T", c.VK)
	}
	if err != nil {
		return fmt.Errorf("circuit %s: %s and %s: %w", c.Name, pkPath, vkPath, err)
	}
	mismatch := func(what string, pk, other any, otherFile string) error {
		return fmt.Errorf("circuit %s: %s: %s is %v but %s says %v: the files are not one key set", c.Name, pkPath, what, pk, otherFile, other)
	}
	switch {
	case k.NbWires != uint64(c.NbWires):
		return mismatch("the number of wires", k.NbWires, c.NbWires, ccsPath)
	case k.NbPublic != uint64(c.NbPublic):
		return mismatch("the number of public wires", k.NbPublic, c.NbPublic, ccsPath)
	case k.DomainSize != c.DomainSize:
		return mismatch("the domain size", k.DomainSize, c.DomainSize, ccsPath)
	case vkPublic(c.VK) != c.NbPublic:
		return fmt.Errorf("circuit %s: %s has %d public points but %s has %d public wires", c.Name, vkPath, vkPublic(c.VK), ccsPath, c.NbPublic)
	}
	if m := c.Meta; m != nil {
		if m.PKDigest != c.PKDigestHex() {
			return mismatch("the header digest", c.PKDigestHex(), m.PKDigest, metaPath)
		}
		if m.Curve != "" && m.Curve != string(c.Curve) {
			return mismatch("the curve", c.Curve, m.Curve, metaPath)
		}
		if m.NbConstraints != c.NbConstraints || m.NbWires != c.NbWires || m.NbPublic != c.NbPublic {
			return fmt.Errorf("circuit %s: %s records %d constraints, %d wires, %d public; %s has %d, %d, %d",
				c.Name, metaPath, m.NbConstraints, m.NbWires, m.NbPublic, ccsPath, c.NbConstraints, c.NbWires, c.NbPublic)
		}
	}
	return nil
}

// sameSetup maps c's proving key with key and checks that it comes from the setup
// of the verifying key whose points are given (nbK public points); it keeps the key
// in c and returns its sizes.
func sameSetup[G1, G2 any](c *Circuit, key func() (*keyfile.ProvingKey[G1, G2], error), alpha, beta, delta G1, beta2, delta2 G2, nbK int) (keyfile.Header, error) {
	k, err := key()
	if err != nil {
		return keyfile.Header{}, err
	}
	// Affine points in Montgomery form have one representation each: == is equality.
	if any(k.G1Alpha) != any(alpha) || any(k.G1Beta) != any(beta) || any(k.G1Delta) != any(delta) ||
		any(k.G2Beta) != any(beta2) || any(k.G2Delta) != any(delta2) {
		return keyfile.Header{}, fmt.Errorf("they come from different setups (alpha, beta or delta differ): the files are not one key set")
	}
	c.key = k
	return c.pk.Header(), nil
}

// vkPublic is the number of public points of a verifying key (the constant one's
// included), on either curve.
func vkPublic(vk groth16.VerifyingKey) int { return vk.NbPublicWitness() + 1 }

// hasCommitments reports whether a verifying key carries Pedersen commitment keys.
func hasCommitments(vk groth16.VerifyingKey) bool {
	switch vk := vk.(type) {
	case *groth16_bls12381.VerifyingKey:
		return len(vk.CommitmentKeys) > 0
	case *groth16_bn254.VerifyingKey:
		return len(vk.CommitmentKeys) > 0
	}
	return false
}
