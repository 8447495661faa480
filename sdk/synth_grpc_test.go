package sdk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	plugin "github.com/hashicorp/go-plugin"
	"golang.org/x/sys/unix"
)

// fakeSynth records the requests it gets and answers what the test set.
type fakeSynth struct {
	desc    SynthDescription
	loaded  []CircuitRef
	reqs    []SynthesizeRequest
	synthFn func(SynthesizeRequest) (SynthesizeResult, error)
}

func (f *fakeSynth) Describe(context.Context) (SynthDescription, error) { return f.desc, nil }
func (f *fakeSynth) LoadCircuit(_ context.Context, r CircuitRef) error {
	f.loaded = append(f.loaded, r)
	return nil
}
func (f *fakeSynth) Synthesize(_ context.Context, r SynthesizeRequest) (SynthesizeResult, error) {
	f.reqs = append(f.reqs, r)
	return f.synthFn(r)
}

func connectSynth(t *testing.T, s Synthesizer) Synthesizer {
	t.Helper()
	// The plugin set the host and Serve use: the client is what GRPCClient dispenses.
	client, _ := plugin.TestPluginGRPCConn(t, false, SynthesizerPlugins(s)[ProtocolVersion])
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(SynthesizerPluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(Synthesizer)
}

func TestSynthRoundTrip(t *testing.T) {
	f := &fakeSynth{desc: SynthDescription{Name: "fake", Version: "0.1", APIVersions: []uint32{1}, Curves: []Curve{CurveBLS12381}, MaxInFlight: 3}}
	c := connectSynth(t, f)
	ctx := context.Background()
	d, err := c.Describe(ctx)
	if err != nil || !reflect.DeepEqual(d, f.desc) {
		t.Fatalf("Describe: %+v, %v; want %+v", d, err, f.desc)
	}
	ref := CircuitRef{ID: "c", Curve: CurveBLS12381, CCSPath: "/k/c.ccs", CCSSHA256: [32]byte{1, 2}, NbWires: 5, NbConstraints: 7, NbPublic: 2, NbSecret: 1}
	if err := c.LoadCircuit(ctx, ref); err != nil || !reflect.DeepEqual(f.loaded, []CircuitRef{ref}) {
		t.Fatalf("LoadCircuit: %v; the synthesizer got %+v", err, f.loaded)
	}
	out := testHandle()
	f.synthFn = func(SynthesizeRequest) (SynthesizeResult, error) { return SynthesizeResult{}, nil }
	res, err := c.Synthesize(ctx, SynthesizeRequest{CircuitID: "c", Witness: []byte{1, 2, 3}, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Wall <= 0 {
		t.Errorf("Synthesize: wall %v, want it filled in by the server", res.Wall)
	}
	want := SynthesizeRequest{CircuitID: "c", Witness: []byte{1, 2, 3}, Output: out}
	if !reflect.DeepEqual(f.reqs, []SynthesizeRequest{want}) {
		t.Errorf("the synthesizer got %+v, want %+v", f.reqs, want)
	}
	f.synthFn = func(SynthesizeRequest) (SynthesizeResult, error) {
		return SynthesizeResult{Wall: time.Second}, Errorf(ErrInvalidArgument, "witness does not satisfy")
	}
	_, err = c.Synthesize(ctx, SynthesizeRequest{CircuitID: "c", Output: out})
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrInvalidArgument || e.Retryable || e.Message != "witness does not satisfy" {
		t.Errorf("typed error: %#v", err)
	}
	bad := out
	bad.AOffset++
	n := len(f.reqs)
	_, err = c.Synthesize(ctx, SynthesizeRequest{CircuitID: "c", Output: bad})
	if KindOf(err) != ErrInvalidArgument || !strings.Contains(err.Error(), "a_offset") || len(f.reqs) != n {
		t.Errorf("an output of the wrong layout: %v (the synthesizer saw %d requests, had %d)", err, len(f.reqs), n)
	}
	noInode := out
	noInode.Inode = 0
	_, err = c.Synthesize(ctx, SynthesizeRequest{CircuitID: "c", Output: noInode})
	if KindOf(err) != ErrInvalidArgument || !strings.Contains(err.Error(), "no inode") || len(f.reqs) != n {
		t.Errorf("an output without an inode: %v (the synthesizer saw %d requests, had %d)", err, len(f.reqs), n)
	}
}

// testOutput makes an output as the host does (sdk/shm's Store.Output, which
// this package cannot import): a zeroed memfd of the layout's size, sealed
// against growing and shrinking.
func testOutput(t *testing.T, nbWires, nbConstraints uint64) PartitionHandle {
	t.Helper()
	return testOutputOn(t, CurveBLS12381, nbWires, nbConstraints)
}

// testOutputOn is testOutput for a partition of curve c.
func testOutputOn(t *testing.T, c Curve, nbWires, nbConstraints uint64) PartitionHandle {
	t.Helper()
	wOff, aOff, bOff, size := PartitionLayout(nbWires, nbConstraints)
	path, ino := testMemfd(t, unix.F_SEAL_GROW|unix.F_SEAL_SHRINK, make([]byte, size))
	return PartitionHandle{Path: path, Inode: ino, Size: int64(size), Curve: c,
		NbWires: nbWires, NbConstraints: nbConstraints, WOffset: wOff, AOffset: aOff, BOffset: bOff}
}

func TestWritePartition(t *testing.T) {
	W, A, B := make([]fr.Element, 5), make([]fr.Element, 7), make([]fr.Element, 7)
	for i := range W {
		W[i].SetUint64(uint64(i + 1))
	}
	for i := range A {
		A[i].SetUint64(uint64(100 + i))
		B[i].SetUint64(uint64(200 + i))
	}
	out := testOutput(t, 5, 7)
	p := writeAndOpen(t, out, W, A, B)
	if !reflect.DeepEqual(p.W(), W) || !reflect.DeepEqual(p.A(), A) || !reflect.DeepEqual(p.B(), B) {
		t.Error("the sections read back differ")
	}
	if err := WritePartition(out, W, A, B); KindOf(err) != ErrInternal {
		t.Errorf("WritePartition into a partition sealed against writes: %v, want internal", err)
	}

	other := testOutput(t, 5, 7)
	wrongInode := testOutput(t, 5, 7)
	wrongInode.Inode = other.Inode
	gone := testOutput(t, 5, 7)
	gone.Path = filepath.Join(t.TempDir(), "gone")
	// A handle for 200 constraints on the memfd made for 7: a larger file.
	small := testOutput(t, 5, 7)
	big := testOutput(t, 5, 200)
	big.Path, big.Inode = small.Path, small.Inode
	A200, B200 := make([]fr.Element, 200), make([]fr.Element, 200)
	for _, tc := range []struct {
		name    string
		out     PartitionHandle
		W, A, B []fr.Element
		want    string
	}{
		{"another inode", wrongInode, W, A, B, "not the output it names"},
		{"no such file", gone, W, A, B, "no such file"},
		{"size not the file's", big, W, A200, B200, "bytes, the handle says"},
		{"W too short", testOutput(t, 5, 7), W[:4], A, B, "W has 4 elements"},
		{"B too long", testOutput(t, 5, 6), W, A[:6], B, "B has 7 elements"},
		{"relative path", PartitionHandle{Path: "p.partition", Size: out.Size, Curve: CurveBLS12381, NbWires: 5, NbConstraints: 7,
			WOffset: out.WOffset, AOffset: out.AOffset, BOffset: out.BOffset}, W, A, B, "not absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WritePartition(tc.out, tc.W, tc.A, tc.B)
			if KindOf(err) != ErrInvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("WritePartition: %v, want invalid_argument saying %q", err, tc.want)
			}
			for _, h := range []PartitionHandle{tc.out, other} {
				if data, err := os.ReadFile(h.Path); err == nil && strings.Trim(string(data), "\x00") != "" {
					t.Errorf("a refused write changed %s", h.Path)
				}
			}
		})
	}
}

// TestWritePartitionCurves writes a partition of each curve with its own
// scalars and reads it back with Vectors; the other curve's scalars are refused
// both ways, naming the two curves, and leave the output untouched.
func TestWritePartitionCurves(t *testing.T) {
	t.Run("bls12-381", func(t *testing.T) { testWriteCurve[fr.Element, bnfr.Element](t, CurveBLS12381, "BLS12-381", "BN254") })
	t.Run("bn254", func(t *testing.T) { testWriteCurve[bnfr.Element, fr.Element](t, CurveBN254, "BN254", "BLS12-381") })
}

// testWriteCurve writes and reads a partition of curve c, whose scalars are S;
// O is the other curve's scalar, named other (c's is named title).
func testWriteCurve[S, O ~[4]uint64](t *testing.T, c Curve, title, other string) {
	W, A, B := make([]S, 5), make([]S, 7), make([]S, 7)
	for i := range W {
		W[i] = S{uint64(i + 1)}
	}
	for i := range A {
		A[i], B[i] = S{uint64(100 + i)}, S{uint64(200 + i)}
	}
	wrong := testOutputOn(t, c, 5, 7)
	err := WritePartition(wrong, make([]O, 5), make([]O, 7), make([]O, 7))
	want := "the vectors are " + other + " scalars, the partition is " + title
	if KindOf(err) != ErrInvalidArgument || !strings.Contains(err.Error(), want) {
		t.Errorf("WritePartition of %s scalars into a %s output: %v, want invalid_argument saying %q", other, title, err, want)
	}
	if data, err := os.ReadFile(wrong.Path); err != nil || strings.Trim(string(data), "\x00") != "" {
		t.Errorf("a refused write changed the output (%v)", err)
	}

	p := writeAndOpen(t, testOutputOn(t, c, 5, 7), W, A, B)
	gotW, gotA, gotB, err := Vectors[S](p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotW, W) || !reflect.DeepEqual(gotA, A) || !reflect.DeepEqual(gotB, B) {
		t.Error("the sections read back differ")
	}
	if _, _, _, err := Vectors[O](p); KindOf(err) != ErrInvalidArgument || !strings.Contains(err.Error(), want) {
		t.Errorf("Vectors as %s scalars of a %s partition: %v, want invalid_argument saying %q", other, title, err, want)
	}
	p.Close()
	if _, _, _, err := Vectors[S](p); KindOf(err) != ErrInvalidArgument {
		t.Errorf("Vectors of a closed partition: %v, want invalid_argument", err)
	}
}

// writeAndOpen writes W, A and B into out, seals it (sealWrites) and opens
// it as a backend does; the partition is closed when t ends.
func writeAndOpen[S ~[4]uint64](t *testing.T, out PartitionHandle, W, A, B []S) *Partition {
	t.Helper()
	if err := WritePartition(out, W, A, B); err != nil {
		t.Fatal(err)
	}
	sealWrites(t, out.Path)
	p, err := OpenPartition(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// sealWrites seals the written output at path against writes as the host's
// Adopt does (adding seals takes a writable descriptor), before a test reads
// it as a backend does. It fails when a writable mapping was left behind.
func sealWrites(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE); err != nil {
		t.Fatalf("sealing against writes after WritePartition (a writable mapping left behind?): %v", err)
	}
}
