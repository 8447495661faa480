package circomtest

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk/circom"
)

var ptauCurves = []ecc.ID{ecc.BN254, ecc.BLS12_381}

// runSnarkjs runs snarkjs with args in dir and returns its output, failing t on an
// error.
func runSnarkjs(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(Snarkjs(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("snarkjs %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestWritePtauIsSnarkjsUntouched: with τ = α = β = 1 the file is, byte for byte,
// what `snarkjs powersoftau new` and `prepare phase2` write (a ceremony nobody has
// contributed to): the container, the header, every section's size and order, the
// generators' encoding, the empty contributions, and the Lagrange sections, whose
// points are then mostly at infinity (L_i(1) is 0 for i ≠ 0) and, in section 12's
// last level, ωⁱ/n, which depends on snarkjs's roots and their order.
func TestWritePtauIsSnarkjsUntouched(t *testing.T) {
	const power = 4
	one := big.NewInt(1)
	for _, curve := range ptauCurves {
		t.Run(curve.String(), func(t *testing.T) {
			dir := t.TempDir()
			prime, err := PrimeName(curve)
			if err != nil {
				t.Fatal(err)
			}
			runSnarkjs(t, dir, "powersoftau", "new", prime, fmt.Sprint(power), "new.ptau")
			runSnarkjs(t, dir, "powersoftau", "prepare", "phase2", "new.ptau", "snarkjs.ptau")
			c, err := ptauCurveOf(curve)
			if err != nil {
				t.Fatal(err)
			}
			ours := filepath.Join(dir, "ours.ptau")
			if err := writePtauFile(ours, c, power, ptauSecrets{tau: one, alpha: one, beta: one}, true); err != nil {
				t.Fatal(err)
			}
			comparePtau(t, ours, filepath.Join(dir, "snarkjs.ptau"))
		})
	}
}

// TestWritePtauLagrangeIsSnarkjs: for random secrets, snarkjs's `prepare phase2` of
// the unprepared file (sections 1 to 7) gives, byte for byte, the prepared file
// WritePtau computes directly: the Lagrange sections are snarkjs's, at every level,
// with its roots of unity, its order and its truncated last level of section 12.
func TestWritePtauLagrangeIsSnarkjs(t *testing.T) {
	const power = 5
	for _, curve := range ptauCurves {
		t.Run(curve.String(), func(t *testing.T) {
			dir := t.TempDir()
			c, err := ptauCurveOf(curve)
			if err != nil {
				t.Fatal(err)
			}
			var s ptauSecrets
			for _, secret := range []**big.Int{&s.tau, &s.alpha, &s.beta} {
				if *secret, err = randomScalar(rand.Reader, c.scalarField); err != nil {
					t.Fatal(err)
				}
			}
			if err := writePtauFile(filepath.Join(dir, "phase1.ptau"), c, power, s, false); err != nil {
				t.Fatal(err)
			}
			if err := writePtauFile(filepath.Join(dir, "ours.ptau"), c, power, s, true); err != nil {
				t.Fatal(err)
			}
			runSnarkjs(t, dir, "powersoftau", "prepare", "phase2", "phase1.ptau", "snarkjs.ptau")
			comparePtau(t, filepath.Join(dir, "ours.ptau"), filepath.Join(dir, "snarkjs.ptau"))
		})
	}
}

// TestWritePtauSetsUpSnarkjsKeys: snarkjs sets up a Groth16 key for the testdata's
// circuits with WritePtau's file, at the smallest power that holds each (so setup
// takes the H points from section 12's extra level), proves the committed witness
// with it, and accepts its own proof; wrong Lagrange points would give a key whose
// proofs do not verify.
func TestWritePtauSetsUpSnarkjsKeys(t *testing.T) {
	for _, circuit := range []string{"multiplier", "poseidonbits"} {
		for _, curve := range ptauCurves {
			prime, err := PrimeName(curve)
			if err != nil {
				t.Fatal(err)
			}
			base := circuit + "_" + prime
			t.Run(base, func(t *testing.T) {
				dir := t.TempDir()
				cs, err := circom.ReadR1CS(Path(base + ".r1cs"))
				if err != nil {
					t.Fatal(err)
				}
				power := 1
				for uint64(1)<<power < circom.DomainSizeFor(cs) {
					power++
				}
				if err := WritePtau(filepath.Join(dir, "pot.ptau"), curve, power, rand.Reader); err != nil {
					t.Fatal(err)
				}
				runSnarkjs(t, dir, "groth16", "setup", Path(base+".r1cs"), "pot.ptau", "key.zkey")
				runSnarkjs(t, dir, "zkey", "export", "verificationkey", "key.zkey", "vk.json")
				runSnarkjs(t, dir, "groth16", "prove", "key.zkey", Path(base+".wtns"), "proof.json", "public.json")
				if out := runSnarkjs(t, dir, "groth16", "verify", "vk.json", "public.json", "proof.json"); !strings.Contains(out, "OK!") {
					t.Errorf("snarkjs groth16 verify of its own proof with a key from WritePtau (2^%d) printed:\n%s", power, out)
				}
			})
		}
	}
}

// comparePtau fails t unless the files are equal, naming the first section that
// differs and where.
func comparePtau(t *testing.T, oursPath, snarkjsPath string) {
	t.Helper()
	ours, err := os.ReadFile(oursPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(snarkjsPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(ours, want) {
		return
	}
	oursSections, err := splitPtau(ours)
	if err != nil {
		t.Fatalf("our file: %v", err)
	}
	wantSections, err := splitPtau(want)
	if err != nil {
		t.Fatalf("snarkjs's file: %v", err)
	}
	if len(oursSections) != len(wantSections) {
		t.Fatalf("our file has %d sections, snarkjs's %d", len(oursSections), len(wantSections))
	}
	for i := range wantSections {
		o, w := oursSections[i], wantSections[i]
		switch {
		case o.id != w.id:
			t.Fatalf("section %d is of type %d in our file, %d in snarkjs's", i, o.id, w.id)
		case len(o.content) != len(w.content):
			t.Fatalf("section type %d has %d bytes in our file, %d in snarkjs's", o.id, len(o.content), len(w.content))
		case !bytes.Equal(o.content, w.content):
			at := 0
			for o.content[at] == w.content[at] {
				at++
			}
			t.Fatalf("section type %d differs from snarkjs's from byte %d of %d on", o.id, at, len(w.content))
		}
	}
	t.Fatal("the files differ outside their sections")
}

type ptauSection struct {
	id      uint32
	content []byte
}

// splitPtau returns the sections of a .ptau file in file order.
func splitPtau(data []byte) ([]ptauSection, error) {
	if len(data) < 12 || string(data[:4]) != "ptau" {
		return nil, fmt.Errorf("not a ptau file")
	}
	n := binary.LittleEndian.Uint32(data[8:])
	data = data[12:]
	var sections []ptauSection
	for i := uint32(0); i < n; i++ {
		if len(data) < 12 {
			return nil, fmt.Errorf("section %d: truncated header", i)
		}
		id, size := binary.LittleEndian.Uint32(data), binary.LittleEndian.Uint64(data[4:])
		if size > uint64(len(data)-12) {
			return nil, fmt.Errorf("section %d (type %d): %d bytes, %d remain", i, id, size, len(data)-12)
		}
		sections = append(sections, ptauSection{id: id, content: data[12 : 12+size]})
		data = data[12+size:]
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("%d bytes after the last section", len(data))
	}
	return sections, nil
}

// BenchmarkWritePtau: the powers of tau circomlib's one-block SHA-256 needs (2^15),
// on each curve.
func BenchmarkWritePtau(b *testing.B) {
	const power = 15
	for _, curve := range ptauCurves {
		b.Run(fmt.Sprintf("%s/2^%d", curve, power), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "pot.ptau")
			for b.Loop() {
				if err := WritePtau(path, curve, power, rand.Reader); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
