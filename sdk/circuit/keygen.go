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
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/circuits"
	zkcurve "github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/internal/devsetup"
	"github.com/zkhost/zkhost/sdk/internal/devsetupbn254"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// SetupDevelopment is NAME.json's setup field for keys made by Keygen, on either curve.
const SetupDevelopment = "development: single-party Groth16 setup (sdk/internal/devsetup, the key gnark's groth16.Setup makes), toxic waste known to its process; not for production"

// ErrExists is returned (wrapped) by Keygen when the circuit's files already exist.
var ErrExists = errors.New("key files already exist")

// Keygen compiles spec's circuit for its curve (spec.Curve), runs a Groth16 setup and writes the
// circuit's files into outDir (created if missing) under spec.ID(): NAME.ccs, NAME.vk,
// NAME.pk (zkhost key file format) and NAME.json.
//
// The setup is a development setup: a single-party Groth16 setup (sdk/internal/devsetup, which
// makes the key gnark's groth16.Setup makes, in parallel and without its doublings), whose
// toxic waste exists, however briefly, in this process. Anyone who kept it could forge
// proofs. On BN254 the setup is gnark's own groth16.Setup (devsetup is BLS12-381's;
// the two timed in BENCHMARKS.md, "BN254 on the CPU"), for development sizes.
// Production keys come from a multi-party ceremony (gnark's mpcsetup), converted with
// keyconv.Convert.
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
// takes no context, so it runs on in a goroutine until it finishes, its result unused
// (a command-line process exits meanwhile); the setup stops at its next chunk.
func KeygenContext(ctx context.Context, spec circuits.Spec, outDir string) error {
	_, err := KeygenWithProgress(ctx, spec, outDir, nil)
	return err
}

// KeygenWithProgress is KeygenContext that calls progress (when not nil) as each phase
// ends, with the phase's name and duration ("compile", "setup", "write"), and returns the
// metadata it wrote to NAME.json. At 2^24 constraints a keygen takes minutes; the
// command line prints each phase.
func KeygenWithProgress(ctx context.Context, spec circuits.Spec, outDir string, progress func(phase string, took time.Duration)) (Metadata, error) {
	meta := Metadata{
		Version: MetadataVersion,
		ID:      spec.ID(),
		Circuit: spec.Name,
		Params:  spec.Params,
		Curve:   zkcurve.Name(spec.Curve),
		Setup:   SetupDevelopment,
	}
	return keygenWithProgress(ctx, outDir, spec.Circuit(), meta, progress)
}

// keygen compiles def and writes its key set as meta.ID into outDir, filling meta in.
func keygen(ctx context.Context, outDir string, def frontend.Circuit, meta Metadata) error {
	_, err := keygenWithProgress(ctx, outDir, def, meta, nil)
	return err
}

// keygenWithProgress is keygen, reporting each phase to progress (when not nil) and
// returning the metadata written.
func keygenWithProgress(ctx context.Context, outDir string, def frontend.Circuit, meta Metadata, progress func(phase string, took time.Duration)) (_ Metadata, err error) {
	if progress == nil {
		progress = func(string, time.Duration) {}
	}
	name := meta.ID
	if name == "" || filepath.Base(name) != name {
		return Metadata{}, fmt.Errorf("circuit: keygen: bad circuit name %q", name)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	final := [4]string{}
	final[0], final[1], final[2], final[3] = Paths(outDir, name)
	if err := checkFree(final); err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: %w", name, err)
	}

	// Compile and setup (minutes at 2^24) run apart, so a cancel returns at once.
	if meta.Curve == "" {
		meta.Curve = zkcurve.Name(ecc.BLS12_381)
	}
	id, err := zkcurve.Parse(meta.Curve)
	if err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	type setupResult struct {
		ccs  constraint.ConstraintSystem
		vk   groth16.VerifyingKey
		k    writableKey
		took [2]time.Duration
		err  error
	}
	done := make(chan setupResult, 1)
	go func() {
		ccs, vk, k, took, err := compileAndSetup(ctx, def, id)
		done <- setupResult{ccs, vk, k, took, err}
	}()
	var res setupResult
	select {
	case res = <-done:
	case <-ctx.Done():
		return Metadata{}, fmt.Errorf("circuit: keygen %s: stopped before the setup finished, nothing written: %w", name, ctx.Err())
	}
	if res.err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: %w", name, res.err)
	}
	ccs, vk, k := res.ccs, res.vk, res.k
	progress("compile", res.took[0])
	progress("setup", res.took[1])

	writeStart := time.Now()
	stage, err := os.MkdirTemp(outDir, ".keygen-"+name+"-")
	if err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	defer os.RemoveAll(stage) // after the renames it is empty; on error it holds the partial set
	staged := [4]string{}
	staged[0], staged[1], staged[2], staged[3] = Paths(stage, name)

	// The proving key (9.7 GB at 2^24) is written beside the constraint system, whose
	// serialization is CPU work on one core (seconds at 2^24) that the key's disk time hides.
	var digest [32]byte
	var pkErr error
	pkDone := make(chan struct{})
	go func() {
		defer close(pkDone)
		digest, pkErr = k.write(staged[2])
	}()
	ccsSum, ccsErr := writeFileFrom(staged[0], ccs)
	<-pkDone
	if ccsErr != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: write constraint system: %w", name, ccsErr)
	}
	if pkErr != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: write proving key: %w", name, pkErr)
	}
	vkSum, err := writeFileFrom(staged[1], vk)
	if err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: write verifying key: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: stopped before the key set was in place, nothing written: %w", name, err)
	}

	meta.NbConstraints = ccs.GetNbConstraints()
	meta.NbPublic = ccs.GetNbPublicVariables()
	meta.NbSecret = ccs.GetNbSecretVariables()
	meta.NbWires = ccs.GetNbInternalVariables() + meta.NbPublic + meta.NbSecret
	meta.DomainSize = k.domainSize
	meta.PKDigest = hex.EncodeToString(digest[:])
	meta.CCSSHA256 = hex.EncodeToString(ccsSum[:])
	meta.VKSHA256 = hex.EncodeToString(vkSum[:])
	js, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	if err := writeFile(staged[3], append(js, '\n')); err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: write metadata: %w", name, err)
	}

	if err := install(staged, final); err != nil {
		return Metadata{}, fmt.Errorf("circuit: keygen %s: %w", name, err)
	}
	progress("write", time.Since(writeStart))
	return meta, nil
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

// writableKey is a proving key of either curve, ready for the key file.
type writableKey struct {
	domainSize uint64
	write      func(path string) ([32]byte, error)
}

// compileAndSetup compiles def for curve id and runs the development Groth16 setup
// (devsetup's, or its BN254 copy devsetupbn254's). It returns how long each took in
// took[0] and took[1].
func compileAndSetup(ctx context.Context, def frontend.Circuit, id ecc.ID) (_ constraint.ConstraintSystem, _ groth16.VerifyingKey, _ writableKey, took [2]time.Duration, _ error) {
	start := time.Now()
	ccs, err := frontend.Compile(id.ScalarField(), r1cs.NewBuilder, def)
	if err != nil {
		return nil, nil, writableKey{}, took, fmt.Errorf("compile: %w", err)
	}
	if err := refuseCommitments(ccs); err != nil {
		return nil, nil, writableKey{}, took, err
	}
	took[0] = time.Since(start)
	start = time.Now()
	var vk groth16.VerifyingKey
	var k writableKey
	switch sys := ccs.(type) {
	case *cs.R1CS:
		var pk *keyfile.BLS12381Key
		pk, vk, err = devsetup.Setup(ctx, sys)
		if err == nil {
			k = writableKey{pk.DomainSize, func(path string) ([32]byte, error) { return keyfile.Write(path, pk) }}
		}
	case *cs_bn254.R1CS:
		var pk *keyfile.BN254Key
		pk, vk, err = devsetupbn254.Setup(ctx, sys)
		if err == nil {
			k = writableKey{pk.DomainSize, func(path string) ([32]byte, error) { return keyfile.Write(path, pk) }}
		}
	default:
		err = fmt.Errorf("compiled to %T, want an R1CS of BLS12-381 or BN254", ccs)
	}
	if err != nil {
		return nil, nil, writableKey{}, took, fmt.Errorf("setup: %w", err)
	}
	took[1] = time.Since(start)
	return ccs, vk, k, took, nil
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
