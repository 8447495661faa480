package shm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk"
)

// TestOutputAdopt writes a partition the way a synthesizer plugin does
// (sdk.WritePartition at the handle Output gives) and adopts it: the handle
// Adopt returns carries the digest of the file and opens with
// sdk.OpenPartition, and ReadW reads the start of W.
func TestOutputAdopt(t *testing.T) {
	d := openTestDir(t)
	W, A, B := vector(t, 100), vector(t, 70), vector(t, 70)
	out, err := d.Output("job-0-0-s1", sdk.CurveBLS12381, 100, 70)
	if err != nil {
		t.Fatal(err)
	}
	if out.Digest != ([32]byte{}) || filepath.Dir(out.Path) != d.Path() {
		t.Fatalf("output handle %+v: want no digest and a path in %s", out, d.Path())
	}
	if err := sdk.WritePartition(out, W, A, B); err != nil {
		t.Fatal(err)
	}
	h, err := d.Adopt(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sdk.OpenPartition(h)
	if err != nil {
		t.Fatalf("OpenPartition of the adopted handle: %v", err)
	}
	defer p.Close()
	if !bytes.Equal(p.Bytes(sdk.SectionB), elementBytes(B)) {
		t.Error("B read back differs")
	}
	head, err := ReadW(h, 3)
	if err != nil || len(head) != 3 || head[2] != W[2] {
		t.Errorf("ReadW: %v, %v", head, err)
	}
	if _, err := d.Output("job-0-0-s1", sdk.CurveBLS12381, 100, 70); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Output of an existing name: %v, want already exists", err)
	}
}

func elementBytes(v []fr.Element) []byte { return bytesOf(v) }

// TestAdoptRefuses checks what Adopt refuses from a plugin: no file, the wrong
// size, a mode open to others, a symbolic link, a path elsewhere.
func TestAdoptRefuses(t *testing.T) {
	d := openTestDir(t)
	tests := []struct {
		name  string
		write func(out sdk.PartitionHandle)
		out   func(out sdk.PartitionHandle) sdk.PartitionHandle
		want  string
	}{
		{"no file", func(sdk.PartitionHandle) {}, nil, "no partition file"},
		{"short file", func(out sdk.PartitionHandle) { os.WriteFile(out.Path, make([]byte, 4096), 0o600) }, nil, "has 4096 bytes, want"},
		{"readable by others", func(out sdk.PartitionHandle) { os.WriteFile(out.Path, make([]byte, out.Size), 0o644) }, nil, "want no access for group and others"},
		{"symbolic link", func(out sdk.PartitionHandle) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			os.WriteFile(target, make([]byte, out.Size), 0o600)
			os.Symlink(target, out.Path)
		}, nil, "adopt"},
		{"path outside the directory", func(sdk.PartitionHandle) {}, func(out sdk.PartitionHandle) sdk.PartitionHandle {
			out.Path = filepath.Join(t.TempDir(), filepath.Base(out.Path))
			return out
		}, "is not a partition file of"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := d.Output("p"+string(rune('a'+i)), sdk.CurveBLS12381, 100, 70)
			if err != nil {
				t.Fatal(err)
			}
			tc.write(out)
			if tc.out != nil {
				out = tc.out(out)
			}
			if _, err := d.Adopt(out); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Adopt: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
