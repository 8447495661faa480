package circuit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/circomconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// SetupSnarkjs is NAME.json's setup field for key sets ImportCircom made.
const SetupSnarkjs = "imported: a snarkjs Groth16 key (.zkey) and its circom constraint system (.r1cs); the setup and its trust are the key owner's"

// CircuitCircom is NAME.json's circuit field for key sets ImportCircom made.
const CircuitCircom = "circom"

// CircomFiles are what a circom and snarkjs user has for a circuit: the files
// ImportCircom reads.
type CircomFiles struct {
	R1CS string // circom's constraint system (.r1cs), BN254 (--prime bn128) or BLS12-381 (--prime bls12381)
	ZKey string // snarkjs's Groth16 proving key (.zkey) for that .r1cs
	// Witness, optional: a circom witness (.wtns) of one partition, proved with the
	// imported key and verified with the zkey's verifying key before the set is
	// written.
	Witness string
}

// CircomName is the key set name ImportCircom's callers default to: the .r1cs
// file's base name without its extension (multiplier for multiplier.r1cs).
func CircomName(r1csPath string) string {
	return strings.TrimSuffix(filepath.Base(r1csPath), filepath.Ext(r1csPath))
}

// ImportCircom brings a circuit compiled with circom and set up with snarkjs into
// outDir as key set name: NAME.pk, the zkey's points in zkhost's key file format in
// snarkjs's H form (circomconv.ProvingKey); NAME.vk, the zkey's verifying key as
// gnark's; NAME.ccs, the .r1cs as a gnark constraint system whose rows are the
// zkey's QAP rows (circomconv.ConstraintSystem), from which the host evaluates A and
// B for each partition and checks every constraint; and NAME.json.
//
// It refuses a pair that does not belong together, naming what differs
// (circom.ZKey.CheckR1CS: the field, the counts, snarkjs's domain, every
// coefficient), and anything circuit.Load would
// refuse. With files.Witness it proves that partition as the CPU backend does and
// verifies the proof. Existing files of the name are refused (ErrExists); everything
// is staged and renamed into place, so an error leaves nothing behind.
//
// Partitions of the key set are circom witnesses (.wtns) or wire assignments in
// circom's wire order (docs/circom.md).
func ImportCircom(ctx context.Context, files CircomFiles, name, outDir string) (*ImportResult, error) {
	if err := checkImportName(name); err != nil {
		return nil, fmt.Errorf("circuit: import: %w", err)
	}
	if files.R1CS == "" || files.ZKey == "" {
		return nil, errors.New("circuit: import: the .r1cs and the .zkey are both needed")
	}
	wrap := func(err error) error { return fmt.Errorf("circuit: import %s: %w", name, err) }

	// The user's files are read and checked before anything is made.
	r1cs, err := circom.ReadR1CS(files.R1CS)
	if err != nil {
		return nil, wrap(err)
	}
	zkey, err := circom.ReadZKey(files.ZKey)
	if err != nil {
		return nil, wrap(err)
	}
	if err := zkey.CheckR1CS(r1cs); err != nil {
		return nil, wrap(fmt.Errorf("%s and %s do not belong together: %w", files.ZKey, files.R1CS, err))
	}
	// The key file is written now, from the zkey of its curve, and the rest
	// converted: everything a failed conversion leaves is in the stage.
	stage, staged, final, err := stageKeySet(outDir, name)
	if err != nil {
		return nil, wrap(err)
	}
	defer os.RemoveAll(stage) // after the renames it is empty; on error it holds the partial set
	var digest [32]byte
	switch zkey.Curve {
	case ecc.BLS12_381:
		digest, err = writeZKey[bls12381.G1Affine, bls12381.G2Affine](zkey, staged[2])
	case ecc.BN254:
		digest, err = writeZKey[bn254.G1Affine, bn254.G2Affine](zkey, staged[2])
	default:
		err = fmt.Errorf("a key for %s, which zkhost does not prove", zkey.Curve)
	}
	if err != nil {
		return nil, wrap(fmt.Errorf("%s: %w", files.ZKey, err))
	}
	sys, err := circomconv.ConstraintSystem(r1cs)
	if err != nil {
		return nil, wrap(fmt.Errorf("%s: %w", files.R1CS, err))
	}
	vk, err := circomconv.VerifyingKey(zkey)
	if err != nil {
		return nil, wrap(fmt.Errorf("%s: %w", files.ZKey, err))
	}
	r1cs, zkey = nil, nil // the converted forms are all that is needed from here

	if _, err := writeFileFrom(staged[0], sys); err != nil {
		return nil, wrap(fmt.Errorf("write constraint system: %w", err))
	}
	if _, err := writeFileFrom(staged[1], vk); err != nil {
		return nil, wrap(fmt.Errorf("write verifying key: %w", err))
	}
	// The staged files are read back as Load reads them, so what is checked and
	// proved is what the daemon will read.
	c := &Circuit{Name: name}
	ccsSum, err := readCCS(staged[0], c)
	if err != nil {
		return nil, wrap(err)
	}
	vkSum, err := readVK(staged[1], c)
	if err != nil {
		return nil, wrap(err)
	}
	defer c.Close() // the staged key; the result loads the installed one
	if err := c.openStaged(stage, staged[2], digest, staged[0], staged[1], staged[2]); err != nil {
		return nil, err
	}

	return finishImport(ctx, c, files.Witness, CircuitCircom, SetupSnarkjs, [3][32]byte{ccsSum, vkSum, digest}, staged, final)
}

// writeZKey writes the proving key of zkey, a key of the curve whose points are G1
// and G2, to path in zkhost's key file format, and returns its header digest.
func writeZKey[G1, G2 any](zkey *circom.ZKey, path string) ([32]byte, error) {
	pk, err := circomconv.ProvingKey[G1, G2](zkey)
	if err != nil {
		return [32]byte{}, err
	}
	return keyfile.Write(path, pk)
}
