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
	plugin "github.com/hashicorp/go-plugin"

	"github.com/zkhost/zkhost/plugins"
	synthv1 "github.com/zkhost/zkhost/proto/synth/v1"
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
	client, _ := plugin.TestPluginGRPCConn(t, false, plugins.SynthesizerVersionedPlugins(&synthServer{s: s})[plugins.ProtocolVersion])
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(plugins.SynthesizerPluginName)
	if err != nil {
		t.Fatal(err)
	}
	return NewSynthesizerClient(raw.(synthv1.SynthesizerClient))
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
	want.Output.Digest = [32]byte{} // the client sends none
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
}

func TestWritePartition(t *testing.T) {
	dir := t.TempDir()
	handle := func(name string, nbWires, nbConstraints uint64) PartitionHandle {
		wOff, aOff, bOff, size := PartitionLayout(nbWires, nbConstraints)
		return PartitionHandle{Path: filepath.Join(dir, name), Size: int64(size), Curve: CurveBLS12381,
			NbWires: nbWires, NbConstraints: nbConstraints, WOffset: wOff, AOffset: aOff, BOffset: bOff}
	}
	W, A, B := make([]fr.Element, 5), make([]fr.Element, 7), make([]fr.Element, 7)
	for i := range W {
		W[i].SetUint64(uint64(i + 1))
	}
	for i := range A {
		A[i].SetUint64(uint64(100 + i))
		B[i].SetUint64(uint64(200 + i))
	}
	out := handle("ok.partition", 5, 7)
	if err := WritePartition(out, W, A, B); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	out.Digest = PartitionDigest(data)
	p, err := OpenPartition(out)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !reflect.DeepEqual(p.W(), W) || !reflect.DeepEqual(p.A(), A) || !reflect.DeepEqual(p.B(), B) {
		t.Error("the sections read back differ")
	}
	if fi, _ := os.Stat(out.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	for _, tc := range []struct {
		name    string
		out     PartitionHandle
		W, A, B []fr.Element
		want    string
	}{
		{"exists", handle("ok.partition", 5, 7), W, A, B, "already exists"},
		{"W too short", handle("w.partition", 5, 7), W[:4], A, B, "W has 4 elements"},
		{"B too long", handle("b.partition", 5, 6), W, A[:6], B, "B has 7 elements"},
		{"relative path", PartitionHandle{Path: "p.partition", Size: out.Size, Curve: CurveBLS12381, NbWires: 5, NbConstraints: 7,
			WOffset: out.WOffset, AOffset: out.AOffset, BOffset: out.BOffset}, W, A, B, "not absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WritePartition(tc.out, tc.W, tc.A, tc.B)
			if KindOf(err) != ErrInvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("WritePartition: %v, want invalid_argument saying %q", err, tc.want)
			}
			if tc.name != "exists" {
				if _, err := os.Stat(tc.out.Path); err == nil {
					t.Errorf("a refused write left %s", tc.out.Path)
				}
			}
		})
	}
}
