package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/host/finalize"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// proofPair is one proof file and the public witness it is checked against.
type proofPair struct{ proof, public string }

func cmdVerify(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`Verifies proofs with gnark's groth16.Verify and the circuit's verifying key
(KEYDIR/NAME.vk), independently of any daemon. Give PROOF PUBLIC pairs (gnark's
Proof.WriteTo and the public witness, witness.MarshalBinary), or directories that
zkhost prove, submit --out or wait --out wrote (every <i>.proof with its <i>.public).
Exits 1 when any proof does not verify.`)
	keys := fs.String("keys", "", "`DIR` of keys written by zkhost keygen (NAME.vk is read)") // backquotes name the placeholder
	name := fs.String("circuit", "", "circuit name (e.g. merkle, or a full key name such as chain-k16)")
	quiet := fs.Bool("quiet", false, "print only the summary line")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if *keys == "" || *name == "" || len(pos) == 0 {
		return fmt.Errorf("%w: --keys, --circuit and at least one PROOF PUBLIC pair or directory are required", cli.ErrUsage)
	}
	pairs, err := proofPairs(pos)
	if err != nil {
		return fmt.Errorf("%w: %v", cli.ErrUsage, err)
	}
	keyName, err := resolveKeys(*keys, *name)
	if err != nil {
		return err
	}
	_, vkPath, _, _ := circuit.Paths(*keys, keyName)
	vk, err := readVerifyingKey(vkPath)
	if err != nil {
		return err
	}
	bad := 0
	for _, p := range pairs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := verifyPair(vk, p); err != nil {
			bad++
			fmt.Fprintf(stdout, "FAIL %s: %v\n", p.proof, err)
			continue
		}
		if !*quiet {
			fmt.Fprintf(stdout, "ok   %s\n", p.proof)
		}
	}
	verb := "verify"
	if len(pairs)-bad == 1 {
		verb = "verifies"
	}
	fmt.Fprintf(stdout, "%d of %s %s against %s\n", len(pairs)-bad, plural(len(pairs), "proof"), verb, vkPath)
	if bad == 1 {
		return errors.New("1 proof does not verify")
	}
	if bad > 0 {
		return fmt.Errorf("%d proofs do not verify", bad)
	}
	return nil
}

// proofPairs reads the arguments: a directory stands for every <i>.proof in it
// with its <i>.public (as `zkhost wait --out` writes them); other arguments come
// in PROOF PUBLIC pairs.
func proofPairs(args []string) ([]proofPair, error) {
	var pairs []proofPair
	for i := 0; i < len(args); i++ {
		fi, err := os.Stat(args[i])
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			dirPairs, err := dirPairs(args[i])
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, dirPairs...)
			continue
		}
		if i+1 >= len(args) {
			return nil, fmt.Errorf("proof %s has no public witness file after it", args[i])
		}
		pairs = append(pairs, proofPair{proof: args[i], public: args[i+1]})
		i++
	}
	return pairs, nil
}

// dirPairs lists the proofs of a directory in partition order.
func dirPairs(dir string) ([]proofPair, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.proof"))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("directory %s holds no .proof file", dir)
	}
	index := func(p string) int {
		n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".proof"))
		if err != nil {
			return -1
		}
		return n
	}
	sort.Slice(matches, func(a, b int) bool {
		ia, ib := index(matches[a]), index(matches[b])
		if ia != ib {
			return ia < ib
		}
		return matches[a] < matches[b]
	})
	pairs := make([]proofPair, 0, len(matches))
	for _, m := range matches {
		pairs = append(pairs, proofPair{proof: m, public: strings.TrimSuffix(m, ".proof") + ".public"})
	}
	return pairs, nil
}

// readVerifyingKey reads a gnark verifying key of either curve: the file does not
// say which, but a key decodes, every point checked, with its own curve's decoder
// only, and to the file's last byte.
func readVerifyingKey(path string) (groth16.VerifyingKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("verifying key: %w", err)
	}
	var errs []error
	for _, id := range []ecc.ID{ecc.BLS12_381, ecc.BN254} {
		vk := groth16.NewVerifyingKey(id)
		n, err := vk.ReadFrom(bytes.NewReader(data))
		if err == nil && n == int64(len(data)) {
			return vk, nil
		}
		if err == nil {
			err = fmt.Errorf("%d trailing bytes", int64(len(data))-n)
		}
		errs = append(errs, fmt.Errorf("as %s: %w", id, err))
	}
	return nil, fmt.Errorf("verifying key %s is neither curve's: %w", path, errors.Join(errs...))
}

// verifyPair checks one proof against its public witness.
func verifyPair(vk groth16.VerifyingKey, p proofPair) error {
	proof, err := os.ReadFile(p.proof)
	if err != nil {
		return err
	}
	pubBytes, err := os.ReadFile(p.public)
	if err != nil {
		return fmt.Errorf("public witness: %w", err)
	}
	pub, err := witness.New(vk.CurveID().ScalarField())
	if err != nil {
		return err
	}
	if err := pub.UnmarshalBinary(pubBytes); err != nil {
		return fmt.Errorf("public witness %s: %w", p.public, err)
	}
	_, err = finalize.Verify(vk, proof, pub)
	return err
}
