package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
)

// circuitFlags adds --circuit, --k, --d, --param and --curve to fs and returns a
// function that resolves them to a registry circuit.
func circuitFlags(fs *flag.FlagSet) func() (circuits.Spec, error) {
	name := fs.String("circuit", "", "example circuit: "+strings.Join(circuits.Names(), ", "))
	curveName := fs.String("curve", "bls12-381", "curve: bls12-381 or bn254")
	k := fs.Int("k", 0, "chain: log2 of the number of constraints; merkle: challenged leaves (0: default)")
	d := fs.Int("d", 0, "merkle: tree depth (0: default)")
	params := paramFlags{}
	fs.Var(params, "param", "circuit parameter name=value (repeatable)")
	return func() (circuits.Spec, error) {
		if *name == "" {
			return circuits.Spec{}, fmt.Errorf("%w: --circuit is required (one of %s)", cli.ErrUsage, strings.Join(circuits.Names(), ", "))
		}
		if *k != 0 {
			params["k"] = *k
		}
		if *d != 0 {
			params["d"] = *d
		}
		return lookupOn(*name, params, *curveName)
	}
}

// lookupOn returns the example circuit name with params over the curve named
// curveName (a --curve flag's value; a bad name is a usage error).
func lookupOn(name string, params map[string]int, curveName string) (circuits.Spec, error) {
	id, err := curve.Parse(curveName)
	if err != nil {
		return circuits.Spec{}, fmt.Errorf("%w: --curve: %v", cli.ErrUsage, err)
	}
	spec, err := circuits.Lookup(name, params)
	if err != nil {
		return circuits.Spec{}, err
	}
	return spec.On(id)
}

// parseCircuitOut parses the flags of a command that takes no arguments, an example
// circuit (circuitFlags' spec) and a required --out (out), and returns the circuit.
func parseCircuitOut(fs *flag.FlagSet, args []string, spec func() (circuits.Spec, error), out *string) (circuits.Spec, error) {
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return circuits.Spec{}, err
	}
	if err := noArgs(pos); err != nil {
		return circuits.Spec{}, err
	}
	s, err := spec()
	if err != nil {
		return circuits.Spec{}, err
	}
	if *out == "" {
		return circuits.Spec{}, fmt.Errorf("%w: --out is required", cli.ErrUsage)
	}
	return s, nil
}

func cmdKeygen(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`Compiles an example circuit and runs a Groth16 setup, writing the key set
NAME.{ccs,vk,pk,json} into KEYDIR (NAME is the circuit with its parameters, such as
merkle-d16-k4 or chain-k16). This is a DEVELOPMENT setup: one process knows the toxic
waste. Production keys come from a multi-party ceremony; bring their gnark files in
with ` + "`zkhost key import`" + `.`)
	spec := circuitFlags(fs)
	out := fs.String("out", "", "key directory to write NAME.ccs, NAME.vk, NAME.pk and NAME.json into")
	s, err := parseCircuitOut(fs, args, spec, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "keygen %s (development setup) into %s ...\n", s.ID(), *out)
	start := time.Now()
	meta, err := circuit.KeygenWithProgress(ctx, s, *out, func(phase string, took time.Duration) {
		fmt.Fprintf(stdout, "  %-8s %.1f s\n", phase, took.Seconds())
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s.{ccs,vk,pk,json}: %d constraints, %d wires, domain %d, key digest %s\n",
		s.ID(), meta.NbConstraints, meta.NbWires, meta.DomainSize, meta.PKDigest)
	fmt.Fprintf(stdout, "keygen took %.1f s, peak memory %s\n", time.Since(start).Seconds(), peakRSS())
	return nil
}

func cmdWitness(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`Writes N valid witnesses of an example circuit into DIR as 0.wtns, 1.wtns, ...
(gnark full witnesses, witness.MarshalBinary), one per partition, for zkhost prove
and zkhost submit. The same --circuit, --k and --d as keygen's pick the same circuit.`)
	spec := circuitFlags(fs)
	n := fs.Int("partitions", 1, "number of witnesses (partitions)")
	seed := fs.Uint64("seed", 0, "seed: different seeds give different witnesses")
	out := fs.String("out", "", "directory to write <i>.wtns into")
	s, err := parseCircuitOut(fs, args, spec, out)
	if err != nil {
		return err
	}
	if *n < 1 {
		return fmt.Errorf("%w: --partitions must be at least 1", cli.ErrUsage)
	}
	if err := circuit.WriteWitnessesSeed(s, *n, *seed, *out); err != nil {
		return err
	}
	noun := "witnesses"
	if *n == 1 {
		noun = "witness"
	}
	fmt.Fprintf(stdout, "wrote %d %s of %s to %s\n", *n, noun, s.ID(), *out)
	return nil
}

func cmdKeyConvert(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`Rewrites a gnark Groth16 proving key (BLS12-381 or BN254) in zkhost's page-aligned key
file format (docs/keyfile.md), which backends map read-only. zkhost key import does
this as part of importing a whole key set; this is the step alone.`)
	in := fs.String("in", "", "gnark proving key file (ProvingKey.WriteTo or WriteRawTo), BLS12-381 or BN254")
	out := fs.String("out", "", "zkhost key file to write")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	if *in == "" || *out == "" {
		return fmt.Errorf("%w: --in and --out are required", cli.ErrUsage)
	}
	digest, err := keyconv.Convert(*in, *out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (key digest %s)\n", *out, hex.EncodeToString(digest[:]))
	return nil
}

// peakRSS returns this process's peak resident memory so far (getrusage's ru_maxrss,
// KiB on Linux), in GiB, or "unknown" where the call fails.
func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f GiB", float64(ru.Maxrss)/(1<<20))
}

func cmdKeyImport(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`Brings a circuit you compiled and set up with gnark into a key directory the daemon and
` + "`zkhost prove`" + ` serve. The three files are checked together (curve, sizes, one setup), and
with --witness by proving and verifying one partition. A circuit whose solver needs hints
zkhost does not have is refused, naming them, unless --assignments-only: its jobs are
then solved elsewhere, by a synthesizer plugin named on its [[circuit]] in the daemon's
config (jobs of gnark witnesses) or by the client (jobs of wire assignments,
docs/assignment.md). Hints are found by their Go names: keep a hint's function name
and package as the circuit was compiled with them. Nothing is written (and no --out
directory is left behind) unless the import succeeds.

With --r1cs and --zkey instead, it brings a circuit compiled with circom
(--prime bn128 or bls12381) and set up with snarkjs (groth16 setup, zkey contribute): the key is
checked against the constraint system coefficient by coefficient, converted, and its
partitions are then circom witnesses (.wtns) checked constraint by constraint
(docs/circom.md). --name defaults to the .r1cs file's name without its extension.`)
	r1cs := fs.String("r1cs", "", "circom constraint system (.r1cs, compiled with --prime bn128 or bls12381); with --zkey")
	zkey := fs.String("zkey", "", "snarkjs Groth16 proving key (.zkey) made for --r1cs")
	ccs := fs.String("ccs", "", "gnark constraint system (R1CS.WriteTo), BLS12-381 or BN254")
	pk := fs.String("pk", "", "gnark proving key (ProvingKey.WriteTo or WriteRawTo)")
	vk := fs.String("vk", "", "gnark verifying key (VerifyingKey.WriteTo)")
	name := fs.String("name", "", "key set name: the circuit's name in --circuit and in the daemon's config")
	out := fs.String("out", "", "key directory to write NAME.ccs, NAME.vk, NAME.pk and NAME.json into")
	wit := fs.String("witness", "", "optional: one partition's gnark full witness (witness.MarshalBinary) or wire assignment\n(a .wtns for --r1cs and --zkey), proved with the key and verified with the verifying key\nbefore anything is written")
	assignmentsOnly := fs.Bool("assignments-only", false, "import a circuit whose hints zkhost does not have: its jobs go through a synthesizer plugin or carry wire assignments")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	circom := *r1cs != "" || *zkey != ""
	switch {
	case circom && (*ccs != "" || *pk != "" || *vk != "" || *assignmentsOnly):
		return fmt.Errorf("%w: --r1cs and --zkey import a circom circuit; --ccs, --pk, --vk and --assignments-only are for gnark files", cli.ErrUsage)
	case circom && (*r1cs == "" || *zkey == "" || *out == ""):
		return fmt.Errorf("%w: --r1cs, --zkey and --out are required to import a circom circuit", cli.ErrUsage)
	case !circom && (*ccs == "" || *pk == "" || *vk == "" || *name == "" || *out == ""):
		return fmt.Errorf("%w: --ccs, --pk, --vk, --name and --out are required (or --r1cs, --zkey and --out for a circom circuit)", cli.ErrUsage)
	}
	if circom && *name == "" {
		*name = circuit.CircomName(*r1cs)
	}
	_, statErr := os.Stat(*out)
	var res *circuit.ImportResult
	start := time.Now()
	if circom {
		res, err = circuit.ImportCircom(ctx, circuit.CircomFiles{R1CS: *r1cs, ZKey: *zkey, Witness: *wit}, *name, *out)
	} else {
		files := circuit.ImportFiles{CCS: *ccs, PK: *pk, VK: *vk, Witness: *wit, AssignmentsOnly: *assignmentsOnly}
		res, err = circuit.Import(ctx, files, *name, *out)
	}
	if err != nil {
		if os.IsNotExist(statErr) {
			// The import made --out; a failed one leaves nothing behind. Remove
			// refuses a directory that is not empty, so nothing else is lost.
			os.Remove(*out)
		}
		return err
	}
	c := res.Circuit
	defer c.Close()
	checked := "sizes, curve and setup checked"
	if res.Proved {
		checked += "; " + *wit + " proved and verified"
	}
	if circom {
		// The system's rows are the circuit's constraints and one per public wire.
		fmt.Fprintf(stdout, "wrote %s.{ccs,vk,pk,json} in %s from %s and %s: %d constraints and %d public wires (%d rows), %d wires, domain %d, key digest %s (%s) in %.1f s\n",
			*name, *out, *r1cs, *zkey, c.NbConstraints-c.NbPublic, c.NbPublic, c.NbConstraints, c.NbWires, c.DomainSize, c.PKDigestHex(),
			strings.Replace(checked, "sizes, curve and setup checked", "the zkey checked against the r1cs", 1), time.Since(start).Seconds())
		return nil
	}
	// The .json's nb_public counts gnark's constant wire "one" with the inputs; say both.
	fmt.Fprintf(stdout, "wrote %s.{ccs,vk,pk,json} in %s: %d constraints, %d wires, %d public inputs (nb_public %d with the constant wire), domain %d, key digest %s (%s)\n",
		*name, *out, c.NbConstraints, c.NbWires, c.NbPublic-1, c.NbPublic, c.DomainSize, c.PKDigestHex(), checked)
	if err := c.CheckSolvable(); err != nil {
		fmt.Fprintf(stdout, "note: %v\n", err)
	}
	return nil
}
