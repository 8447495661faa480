package circuit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// SetupImported is NAME.json's setup field for keys Import brought in.
const SetupImported = "imported: gnark Groth16 keys made outside zkhost (the setup and its trust are the key owner's)"

// ImportFiles are what a gnark user has for a circuit: the files Import reads.
type ImportFiles struct {
	CCS string // constraint system, R1CS.WriteTo, BLS12-381 or BN254
	PK  string // proving key, ProvingKey.WriteTo or WriteRawTo
	VK  string // verifying key, VerifyingKey.WriteTo
	// Witness, optional: a gnark full witness (witness.MarshalBinary) or a wire
	// assignment (docs/assignment.md) of one partition, proved with the imported
	// key and verified with the imported verifying key before the set is written.
	Witness string
	// AssignmentsOnly imports a circuit whose solver needs hints zkhost does not
	// have (MissingHints): its jobs must then carry wire assignments. Without it
	// such a circuit is refused with a *MissingHintsError.
	AssignmentsOnly bool
}

// ImportResult says what Import wrote and checked.
type ImportResult struct {
	Circuit *Circuit // the installed key set, loaded; Close it
	// Proved is true when the witness was proved with the imported proving key and
	// the proof verified with the imported verifying key.
	Proved bool
}

// Import brings a circuit compiled and set up with gnark into outDir as key set name:
// NAME.ccs and NAME.vk copied as they are, NAME.pk converted to zkhost's key file
// format (keyconv.Convert) and NAME.json written. Before anything is installed it checks
// that the three files belong together: each decodes as BLS12-381, the proving key's
// wire, public-wire and domain sizes are the constraint system's, the verifying key has
// a point per public wire, and the two keys share alpha, beta and delta (one setup).
// With files.Witness it also proves that partition with the key and verifies the proof
// with gnark's groth16.Verify and the verifying key, which no mismatched set passes.
//
// A circuit whose solver needs hints this build lacks is refused (a
// *MissingHintsError naming them) unless files.AssignmentsOnly. Existing files of the
// name are refused (ErrExists). Everything is staged in outDir and renamed into
// place, the metadata last, so an error leaves nothing behind.
func Import(ctx context.Context, files ImportFiles, name, outDir string) (res *ImportResult, err error) {
	if err := checkImportName(name); err != nil {
		return nil, fmt.Errorf("circuit: import: %w", err)
	}
	if files.CCS == "" || files.PK == "" || files.VK == "" {
		return nil, errors.New("circuit: import: the constraint system, proving key and verifying key are all needed")
	}
	wrap := func(err error) error { return fmt.Errorf("circuit: import %s: %w", name, err) }
	stage, staged, final, err := stageKeySet(outDir, name)
	if err != nil {
		return nil, wrap(err)
	}
	defer os.RemoveAll(stage) // after the renames it is empty; on error it holds the partial set

	// The user's files are read where they are, so errors name them.
	c := &Circuit{Name: name}
	ccsSum, err := readCCS(files.CCS, c)
	if err != nil {
		return nil, wrap(err)
	}
	if err := c.CheckSolvable(); err != nil && !files.AssignmentsOnly {
		return nil, fmt.Errorf("circuit: import %s: %w (to import it for wire assignments only, pass --assignments-only)", name, err)
	}
	vkSum, err := readVK(files.VK, c)
	if err != nil {
		return nil, wrap(err)
	}

	if err := copyFile(files.CCS, staged[0]); err != nil {
		return nil, wrap(err)
	}
	if err := copyFile(files.VK, staged[1]); err != nil {
		return nil, wrap(err)
	}
	digest, err := keyconv.Convert(files.PK, staged[2])
	if err != nil {
		return nil, wrap(err)
	}
	defer c.Close() // the staged key; the result loads the installed one
	if err := c.openStaged(stage, staged[2], digest, files.CCS, files.VK, files.PK); err != nil {
		return nil, err
	}

	return finishImport(ctx, c, files.Witness, name, SetupImported, [3][32]byte{ccsSum, vkSum, digest}, staged, final)
}

// stageKeySet makes outDir (when missing) and a staging directory in it for key set
// name, after checking that none of the set's files exists: it returns the staging
// directory, which the caller removes when done, and the set's paths in it (staged)
// and in outDir (final), as Paths orders them.
func stageKeySet(outDir, name string) (stage string, staged, final [4]string, err error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", staged, final, err
	}
	final[0], final[1], final[2], final[3] = Paths(outDir, name)
	if err := checkFree(final); err != nil {
		return "", staged, final, err
	}
	if stage, err = os.MkdirTemp(outDir, ".import-"+name+"-"); err != nil {
		return "", staged, final, err
	}
	staged[0], staged[1], staged[2], staged[3] = Paths(stage, name)
	return stage, staged, final, nil
}

// openStaged maps the staged key file pkPath (in the staging directory stage, with
// header digest digest) into c, whose Close unmaps it, and checks that c's
// constraint system, verifying key and proving key agree; the errors name the three
// files ccsName, vkName and pkName.
func (c *Circuit) openStaged(stage, pkPath string, digest [32]byte, ccsName, vkName, pkName string) error {
	f, err := keyfile.Open(pkPath)
	if err != nil {
		return fmt.Errorf("circuit: import %s: %w", c.Name, err)
	}
	c.pk = f
	c.KeyDir, c.PKPath, c.PKDigest = stage, pkPath, digest
	return c.checkConsistent(ccsName, vkName, pkName, "")
}

// finishImport ends an import whose key set c is staged (its files staged, to go to
// final): it proves the partition in witness (when given) with c and verifies the
// proof, writes NAME.json (circuitName and setup, the sizes, sums holding the
// SHA-256 of NAME.ccs and NAME.vk and the key's header digest), installs the set and
// loads it from its installed files, so what the daemon will read is what was
// checked.
func finishImport(ctx context.Context, c *Circuit, witness, circuitName, setup string, sums [3][32]byte, staged, final [4]string) (*ImportResult, error) {
	name := c.Name
	wrap := func(err error) error { return fmt.Errorf("circuit: import %s: %w", name, err) }
	res := &ImportResult{}
	if witness != "" {
		if err := proveOnce(ctx, c, witness); err != nil {
			return nil, wrap(err)
		}
		res.Proved = true
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("circuit: import %s: stopped before the key set was in place, nothing written: %w", name, err)
	}

	meta := Metadata{
		Version: MetadataVersion, ID: name, Circuit: circuitName, Params: map[string]int{}, Curve: string(c.Curve),
		NbConstraints: c.NbConstraints, NbWires: c.NbWires, NbPublic: c.NbPublic, NbSecret: c.NbSecret,
		DomainSize: c.DomainSize, Setup: setup,
		CCSSHA256: hex.EncodeToString(sums[0][:]),
		VKSHA256:  hex.EncodeToString(sums[1][:]),
		PKDigest:  hex.EncodeToString(sums[2][:]),
	}
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, wrap(err)
	}
	if err := writeFile(staged[3], append(js, '\n')); err != nil {
		return nil, wrap(fmt.Errorf("write metadata: %w", err))
	}
	if err := install(staged, final); err != nil {
		return nil, wrap(err)
	}
	if res.Circuit, err = Load(filepath.Dir(final[0]), name); err != nil {
		return nil, err
	}
	return res, nil
}

// checkImportName keeps a key set's name to what a [[circuit]] name may be (host/config
// checks the same): letters, digits, '-', '_' and '.', not first, so the set is
// neither hidden nor unreachable from the config.
func checkImportName(name string) error {
	if name == "" || name[0] == '.' {
		return fmt.Errorf("bad key set name %q: want a name such as my-circuit", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("bad key set name %q: %q is not allowed (use letters, digits, '-', '_' and '.')", name, r)
		}
	}
	return nil
}

// proveOnce proves the partition in file path (a witness or a wire assignment) with
// c's key, as the CPU backend does (refprover), and verifies the proof with gnark.
func proveOnce(ctx context.Context, c *Circuit, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !IsAssignment(data) {
		if err := c.CheckSolvable(); err != nil {
			return fmt.Errorf("%s is a witness, but %w; check with a wire assignment instead", path, err)
		}
	}
	W, A, B := refprover.ScalarMemory(c.NbWires), refprover.ScalarMemory(c.NbConstraints), refprover.ScalarMemory(c.NbConstraints)
	full, err := SynthesizeInputRaw(c, data, 0, W, A, B)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	prover, err := refprover.NewKeyProver(c.pk)
	if err != nil {
		return err
	}
	encoded, _, err := prover.Prove(ctx, W, A, B, 0)
	if err != nil {
		return fmt.Errorf("proving %s: %w", path, err)
	}
	pub, err := full.Public()
	if err != nil {
		return fmt.Errorf("%s: public part: %w", path, err)
	}
	proof := groth16.NewProof(c.VK.CurveID())
	if _, err := proof.ReadFrom(bytes.NewReader(encoded)); err != nil {
		return fmt.Errorf("proving %s: the proof does not decode: %w", path, err)
	}
	if err := groth16.Verify(proof, c.VK, pub); err != nil {
		return fmt.Errorf("a proof of %s with the proving key does not verify with the verifying key: the keys are not one setup for this circuit (%v)", path, err)
	}
	return nil
}

// copyFile copies src to a new file dst, synced, mode 0644.
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return writeFile(dst, data)
}
