package keyfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// writeKey writes the fixture's key to a fresh file and returns its path and digest.
func writeKey(t *testing.T) (string, [32]byte) {
	t.Helper()
	fx := testcircuit.SquareChainKey(t)
	k, err := fromGnark(fx.PK)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "test.pk")
	digest, err := Write(path, k)
	if err != nil {
		t.Fatal(err)
	}
	return path, digest
}

// writeKeyBytes writes the test key and returns the file's bytes and sections, for
// tests that corrupt copies of it.
func writeKeyBytes(t *testing.T) ([]byte, []Section) {
	t.Helper()
	path, _ := writeKey(t)
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return clean, f.Sections()
}

// TestRoundTripSnarkjsForm writes and reads a key in snarkjs's H form: the form
// survives, and g1_z holds the domain size's points, one more than gnark's.
func TestRoundTripSnarkjsForm(t *testing.T) {
	fx := testcircuit.SquareChainKey(t)
	k, err := fromGnark(fx.PK)
	if err != nil {
		t.Fatal(err)
	}
	k.HForm = HFormSnarkjs
	if err := k.Check(); err == nil {
		t.Fatal("Check accepted a key in snarkjs's form with gnark's count of Z points")
	}
	k.G1Z = append(append([]bls12381.G1Affine{}, k.G1Z...), k.G1Alpha)
	got := blsKey(t, writeAndOpen(t, k))
	if got.HForm != HFormSnarkjs || uint64(len(got.G1Z)) != got.DomainSize || !got.G1Z[len(got.G1Z)-1].Equal(&k.G1Alpha) {
		t.Fatalf("read back H form %s with %d Z points for domain %d", got.HForm, len(got.G1Z), got.DomainSize)
	}
}

func TestRoundTrip(t *testing.T) {
	fx := testcircuit.SquareChainKey(t)
	path, digest := writeKey(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.HeaderDigest() != digest {
		t.Errorf("HeaderDigest %x, Write returned %x", f.HeaderDigest(), digest)
	}
	if err := f.Verify(); err != nil {
		t.Fatalf("Verify of a fresh file: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != st.Size() {
		t.Errorf("Size %d, file has %d bytes", f.Size(), st.Size())
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	k := blsKey(t, f)
	if k.NbWires != uint64(len(fx.PK.InfinityA)) || k.DomainSize != fx.PK.Domain.Cardinality {
		t.Errorf("sizes: wires %d domain %d, want %d %d", k.NbWires, k.DomainSize, len(fx.PK.InfinityA), fx.PK.Domain.Cardinality)
	}
	if want := uint64(fx.CCS.GetNbPublicVariables()); k.NbPublic != want {
		t.Errorf("NbPublic %d, want %d", k.NbPublic, want)
	}
	if countTrue(k.InfinityA) == 0 || countTrue(k.InfinityB) == 0 {
		t.Errorf("test key has no infinity points (A %d, B %d): the masks go untested", countTrue(k.InfinityA), countTrue(k.InfinityB))
	}
	// Every point and mask as written (keyconv's tests also prove with an
	// opened key through gnark).
	want, err := fromGnark(fx.PK)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(k, want) {
		t.Fatal("the opened file's key differs from the key written")
	}

	// Writing the same key again gives the same bytes and digest: the format is canonical.
	path2 := filepath.Join(t.TempDir(), "again.pk")
	digest2, err := Write(path2, k)
	if err != nil {
		t.Fatal(err)
	}
	if digest2 != digest {
		t.Errorf("rewriting the key changed its digest")
	}
	b1, _ := os.ReadFile(path)
	b2, _ := os.ReadFile(path2)
	if !bytes.Equal(b1, b2) {
		t.Errorf("rewriting the key changed its bytes")
	}
}

func TestLayout(t *testing.T) {
	path, _ := writeKey(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	secs := f.Sections()
	if len(secs) != nbSections {
		t.Fatalf("%d sections, want %d", len(secs), nbSections)
	}
	names := []string{"g1_small", "g2_small", "g1_a", "g1_b", "g1_k", "g1_z", "g2_b", "inf_a", "inf_b"}
	prev := uint64(HeaderSize)
	for i, s := range secs {
		if s.Kind.String() != names[i] {
			t.Errorf("section %d is %s, want %s", i, s.Kind, names[i])
		}
		if s.Offset%Align != 0 || s.Offset < prev {
			t.Errorf("section %s at offset %d (previous ends at %d)", s.Kind, s.Offset, prev)
		}
		prev = s.Offset + s.Length
	}
	if int64(prev) != f.Size() {
		t.Errorf("last section ends at %d, file size %d", prev, f.Size())
	}
	// The header starts with the magic, version 1 and curve 1, little-endian.
	raw, _ := os.ReadFile(path)
	if string(raw[:8]) != "ZKHOSTPK" || binary.LittleEndian.Uint32(raw[8:]) != 1 || binary.LittleEndian.Uint32(raw[12:]) != 1 {
		t.Errorf("header starts % x", raw[:16])
	}
	// g1_small holds alpha first, in gnark's in-memory layout.
	k := blsKey(t, f)
	alpha := raw[secs[0].Offset : secs[0].Offset+96]
	if !bytes.Equal(alpha, bytesOf([]bls12381.G1Affine{k.G1Alpha})) {
		t.Errorf("g1_small does not start with alpha's raw bytes")
	}
}

func TestVerifyNamesCorruptSection(t *testing.T) {
	clean, secs := writeKeyBytes(t)
	for _, s := range secs {
		t.Run(s.Kind.String(), func(t *testing.T) {
			if s.Length == 0 {
				t.Skipf("section %s is empty in the test key", s.Kind)
			}
			b := bytes.Clone(clean)
			sec := b[s.Offset : s.Offset+s.Length]
			if s.Kind == SectionInfA || s.Kind == SectionInfB {
				// Swap a 0 and a 1 so the number of infinity points, which Open checks,
				// stays the same and only the digest can tell.
				i0, i1 := bytes.IndexByte(sec, 0), bytes.IndexByte(sec, 1)
				if i0 < 0 || i1 < 0 {
					t.Fatalf("section %s has no 0 or no 1 to swap", s.Kind)
				}
				sec[i0], sec[i1] = 1, 0
			} else {
				sec[len(sec)/2] ^= 0x40
			}
			p := filepath.Join(t.TempDir(), "corrupt.pk")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(p)
			if err != nil {
				t.Fatalf("Open of a file with a corrupt section body: %v (only Verify should notice)", err)
			}
			defer f.Close()
			err = f.Verify()
			if err == nil {
				t.Fatalf("Verify passed with section %s corrupted", s.Kind)
			}
			if !strings.Contains(err.Error(), "section "+s.Kind.String()+" ") {
				t.Errorf("Verify error %q does not name section %s", err, s.Kind)
			}
		})
	}
}

func TestOpenRejects(t *testing.T) {
	clean, secs := writeKeyBytes(t)
	le := binary.LittleEndian
	entry := func(kind SectionKind) int { return offSections + (int(kind)-1)*sectionEntry }
	infA := secs[SectionInfA-1]

	cases := []struct {
		name   string
		mutate func(b []byte) []byte
		want   string
	}{
		{"bad magic", func(b []byte) []byte { copy(b, "NOTAKEY!"); return b }, "bad magic"},
		{"version 2", func(b []byte) []byte { le.PutUint32(b[offVersion:], 2); return b }, "unsupported format version 2"},
		{"a BLS12-381 file relabelled BN254", func(b []byte) []byte { le.PutUint32(b[offCurve:], 2); return b }, "count 3 of 64-byte elements"},
		{"unknown curve", func(b []byte) []byte { le.PutUint32(b[offCurve:], 9); return b }, "unknown curve id 9"},
		{"truncated by one byte", func(b []byte) []byte { return b[:len(b)-1] }, "truncated"},
		{"truncated into the header", func(b []byte) []byte { return b[:100] }, "truncated"},
		{"empty", func(b []byte) []byte { return b[:0] }, "truncated"},
		{"trailing bytes", func(b []byte) []byte { return append(b, 0) }, "after its last section"},
		{"misaligned section", func(b []byte) []byte {
			e := entry(SectionG1K)
			le.PutUint64(b[e+4:], le.Uint64(b[e+4:])+8)
			return b
		}, "section g1_k: offset"},
		{"section out of bounds", func(b []byte) []byte {
			e := entry(SectionG1Z)
			le.PutUint64(b[e+4:], 1<<40)
			return b
		}, "section g1_z is out of bounds"},
		{"length does not match count", func(b []byte) []byte {
			e := entry(SectionG1A)
			le.PutUint64(b[e+20:], le.Uint64(b[e+20:])+1)
			return b
		}, "section g1_a: length"},
		{"count does not match sizes", func(b []byte) []byte {
			le.PutUint64(b[offDomainSize:], le.Uint64(b[offDomainSize:])*2)
			return b
		}, "section g1_z has"},
		{"domain not a power of two", func(b []byte) []byte { le.PutUint64(b[offDomainSize:], 300); return b }, "not a power of two"},
		{"too many public wires", func(b []byte) []byte { le.PutUint64(b[offNbPublic:], 1<<50); return b }, "public wires"},
		{"section out of order", func(b []byte) []byte { le.PutUint32(b[entry(SectionG1B):], uint32(SectionG1A)); return b }, "want g1_b"},
		{"section count", func(b []byte) []byte { le.PutUint32(b[offNbSections:], 8); return b }, "lists 8 sections"},
		{"unknown H form", func(b []byte) []byte { le.PutUint32(b[offHForm:], 7); return b }, "unknown H form 7"},
		// snarkjs's form has one Z point more than gnark's: a gnark key relabelled is refused.
		{"H form without its points", func(b []byte) []byte { le.PutUint32(b[offHForm:], uint32(HFormSnarkjs)); return b }, "section g1_z has"},
		{"header padding", func(b []byte) []byte { b[HeaderSize-1] = 1; return b }, "padding"},
		{"infinity flag not boolean", func(b []byte) []byte { b[infA.Offset] = 2; return b }, "section inf_a: byte 0 is 2"},
		{"infinity flags disagree with points", func(b []byte) []byte {
			sec := b[infA.Offset : infA.Offset+infA.Length]
			sec[bytes.IndexByte(sec, 1)] = 0
			return b
		}, "section g1_a has"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mutate(bytes.Clone(clean))
			p := filepath.Join(t.TempDir(), "bad.pk")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(p)
			if err == nil {
				f.Close()
				t.Fatalf("Open accepted the file, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.pk")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want a not-exist error", err)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Errorf("Open of a directory succeeded")
	}
}

func TestWriteLeavesNothingOnError(t *testing.T) {
	fx := testcircuit.SquareChainKey(t)
	good, err := fromGnark(fx.PK)
	if err != nil {
		t.Fatal(err)
	}
	bad := *good
	bad.G1K = bad.G1K[:len(bad.G1K)-1]
	dir := t.TempDir()
	if _, err := Write(filepath.Join(dir, "bad.pk"), &bad); err == nil || !strings.Contains(err.Error(), "g1_k") {
		t.Errorf("Write of an inconsistent key: %v, want an error naming g1_k", err)
	}
	if _, err := Write(filepath.Join(dir, "no-such-dir", "k.pk"), good); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
	// A directory in the way makes the final rename fail after the data was written.
	if err := os.Mkdir(filepath.Join(dir, "taken.pk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "taken.pk", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(filepath.Join(dir, "taken.pk"), good); err == nil {
		t.Error("Write over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "taken.pk" {
			t.Errorf("failed writes left %s behind", e.Name())
		}
	}
}

func TestCloseTwiceAndVerifyAfterClose(t *testing.T) {
	path, _ := writeKey(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := f.Verify(); err == nil {
		t.Error("Verify after Close succeeded")
	}
}
