package circuit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/examples/circuits"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// SetupDevelopment is NAME.json's setup field for keys made by Keygen.
const SetupDevelopment = "development: single-party groth16.Setup, toxic waste known to its process; not for production"

// ErrExists is returned (wrapped) by Keygen when the circuit's files already exist.
var ErrExists = errors.New("key files already exist")

// Keygen compiles spec's circuit for BLS12-381, runs a Groth16 setup and writes the
// circuit's files into outDir (created if missing) under spec.ID(): NAME.ccs, NAME.vk,
// NAME.pk (zkhost key file format) and NAME.json.
//
// The setup is a development setup: gnark's single-party groth16.Setup, whose toxic waste
// exists, however briefly, in this process. Anyone who kept it could forge proofs.
// Production keys come from a multi-party ceremony (gnark's mpcsetup), converted with
// keyfile.Convert.
//
// Keygen refuses a circuit that uses commitments, and refuses to overwrite existing files
// of the same name (ErrExists): keys in use must not change under a running host. All
// files are staged in a temporary directory inside outDir and renamed into place, the
// metadata last, so an error leaves no partial file behind.
func Keygen(spec circuits.Spec, outDir string) error {
	return KeygenContext(context.Background(), spec, outDir)
}

// KeygenContext is Keygen that stops when ctx ends (a Ctrl-C at the command line):
// it returns an error wrapping ctx.Err() and leaves no file behind. gnark's compile
// and setup take no context, so they run on in a goroutine until they finish, their
// result unused; a command-line process exits meanwhile, a long-running one pays
// the CPU once.
func KeygenContext(ctx context.Context, spec circuits.Spec, outDir string) error {
	meta := Metadata{
		Version: MetadataVersion,
		ID:      spec.ID(),
		Circuit: spec.Name,
		Params:  spec.Params,
		Setup:   SetupDevelopment,
	}
	return keygen(ctx, outDir, spec.Circuit(), meta)
}

// keygen compiles def and writes its key set as meta.ID into outDir, filling meta in.
func keygen(ctx context.Context, outDir string, def frontend.Circuit, meta Metadata) (err error) {
	name := meta.ID
	if name == "" || filepath.Base(name) != name {
		return fmt.Errorf("circuit: keygen: bad circuit name %q", name)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	final := [4]string{}
	final[0], final[1], final[2], final[3] = Paths(outDir, name)
	if err := checkFree(final); err != nil {
		return fmt.Errorf("circuit: keygen %s: %w", name, err)
	}

	// Compile and setup (minutes at 2^22) run apart, so a cancel returns at once.
	type setupResult struct {
		ccs *cs.R1CS
		vk  groth16.VerifyingKey
		k   *keyfile.ProvingKey
		err error
	}
	done := make(chan setupResult, 1)
	go func() {
		ccs, vk, k, err := compileAndSetup(def)
		done <- setupResult{ccs, vk, k, err}
	}()
	var res setupResult
	select {
	case res = <-done:
	case <-ctx.Done():
		return fmt.Errorf("circuit: keygen %s: stopped before the setup finished, nothing written: %w", name, ctx.Err())
	}
	if res.err != nil {
		return fmt.Errorf("circuit: keygen %s: %w", name, res.err)
	}
	ccs, vk, k := res.ccs, res.vk, res.k

	stage, err := os.MkdirTemp(outDir, ".keygen-"+name+"-")
	if err != nil {
		return fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	defer os.RemoveAll(stage) // after the renames it is empty; on error it holds the partial set
	staged := [4]string{}
	staged[0], staged[1], staged[2], staged[3] = Paths(stage, name)

	ccsSum, err := writeFileFrom(staged[0], ccs)
	if err != nil {
		return fmt.Errorf("circuit: keygen %s: write constraint system: %w", name, err)
	}
	vkSum, err := writeFileFrom(staged[1], vk)
	if err != nil {
		return fmt.Errorf("circuit: keygen %s: write verifying key: %w", name, err)
	}
	digest, err := keyfile.Write(staged[2], k)
	if err != nil {
		return fmt.Errorf("circuit: keygen %s: write proving key: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("circuit: keygen %s: stopped before the key set was in place, nothing written: %w", name, err)
	}

	meta.Curve = "bls12-381"
	meta.NbConstraints = ccs.GetNbConstraints()
	meta.NbPublic = ccs.GetNbPublicVariables()
	meta.NbSecret = ccs.GetNbSecretVariables()
	meta.NbWires = ccs.GetNbInternalVariables() + meta.NbPublic + meta.NbSecret
	meta.DomainSize = k.DomainSize
	meta.PKDigest = hex.EncodeToString(digest[:])
	meta.CCSSHA256 = hex.EncodeToString(ccsSum[:])
	meta.VKSHA256 = hex.EncodeToString(vkSum[:])
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	if err := writeFile(staged[3], append(js, '\n')); err != nil {
		return fmt.Errorf("circuit: keygen %s: write metadata: %w", name, err)
	}

	if err := install(staged, final); err != nil {
		return fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	return nil
}

// install renames a staged key set (ccs, vk, pk, metadata, as Paths orders them) into
// place and syncs the directory. The metadata goes last: until it is in place a Load of
// this name finds no key set (or, if a rename fails midway, a set whose digests do not
// match its metadata); a failed rename removes the files already moved.
func install(staged, final [4]string) error {
	for i := range final {
		if err := os.Rename(staged[i], final[i]); err != nil {
			for j := range i {
				os.Remove(final[j])
			}
			return err
		}
	}
	if d, err := os.Open(filepath.Dir(final[0])); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// checkFree refuses to go on when any of a key set's files exists.
func checkFree(final [4]string) error {
	for _, p := range final {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s: %w (remove the old key set first)", p, ErrExists)
		}
	}
	return nil
}

// compileAndSetup compiles def for BLS12-381 and runs gnark's Groth16 setup.
func compileAndSetup(def frontend.Circuit) (*cs.R1CS, groth16.VerifyingKey, *keyfile.ProvingKey, error) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, def)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("compile: %w", err)
	}
	r1csSys, ok := ccs.(*cs.R1CS)
	if !ok {
		return nil, nil, nil, fmt.Errorf("compiled to %T, want a BLS12-381 R1CS", ccs)
	}
	if err := refuseCommitments(r1csSys); err != nil {
		return nil, nil, nil, err
	}
	pkAny, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("setup: %w", err)
	}
	k, err := keyfile.FromGnark(pkAny.(*groth16_bls12381.ProvingKey))
	if err != nil {
		return nil, nil, nil, err
	}
	return r1csSys, vk, k, nil
}

// writeFileFrom writes src to path (synced, mode 0644) and returns the SHA-256 of what it
// wrote.
func writeFileFrom(path string, src io.WriterTo) (sum [32]byte, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return sum, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	h := sha256.New()
	if _, err := src.WriteTo(io.MultiWriter(f, h)); err != nil {
		return sum, err
	}
	if err := f.Sync(); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// writeFile writes data to a new file at path, synced, mode 0644.
func writeFile(path string, data []byte) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}
