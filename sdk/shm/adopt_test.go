//go:build linux

package shm

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestOutputAdopt writes a partition the way a synthesizer plugin does
// (sdk.WritePartition into the memfd Output made) and adopts it: the handle
// Adopt returns opens with sdk.OpenPartition (sealed), no write gets through
// any more, and ReadW reads the start of W.
func TestOutputAdopt(t *testing.T) {
	s := newTestStore(t)
	W, A, B := testcircuit.RandomVector(t, 100), testcircuit.RandomVector(t, 70), testcircuit.RandomVector(t, 70)
	out, err := s.Output("job-0-0-s1", sdk.CurveBLS12381, 100, 70)
	if err != nil {
		t.Fatal(err)
	}
	if out.Inode == 0 || !strings.HasPrefix(out.Path, "/proc/") {
		t.Fatalf("output handle %+v: want a /proc path and an inode", out)
	}
	if _, err := sdk.OpenPartition(out); sdk.KindOf(err) != sdk.ErrUnsealed {
		t.Errorf("OpenPartition of an output not adopted: %v, want unsealed", err)
	}
	// A descriptor the synthesizer opened for writing and kept.
	w, err := os.OpenFile(out.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Truncate(out.Size * 2); err == nil {
		t.Error("an output could be grown before Adopt")
	}
	if err := sdk.WritePartition(out, W, A, B); err != nil {
		t.Fatal(err)
	}
	head, err := s.ReadW(out, 3)
	if err != nil || len(head) != 3 || head[2] != W[2] {
		t.Errorf("ReadW of the pending output: %v, %v", head, err)
	}
	h, err := s.Adopt(out)
	if err != nil {
		t.Fatal(err)
	}
	if h != out {
		t.Errorf("Adopt returned %+v, want the output's handle %+v", h, out)
	}
	p, err := sdk.OpenPartition(h)
	if err != nil {
		t.Fatalf("OpenPartition of the adopted handle: %v", err)
	}
	defer p.Close()
	if !bytes.Equal(p.Bytes(sdk.SectionB), bytesOf(B)) || !bytes.Equal(p.Bytes(sdk.SectionW), bytesOf(W)) {
		t.Error("the sections read back differ")
	}
	if _, err := w.WriteAt([]byte("lie"), int64(h.AOffset)); !errors.Is(err, unix.EPERM) {
		t.Errorf("a write through the synthesizer's descriptor after Adopt: %v, want EPERM", err)
	}
	head, err = s.ReadW(h, 3)
	if err != nil || len(head) != 3 || head[2] != W[2] {
		t.Errorf("ReadW: %v, %v", head, err)
	}
	if _, err := s.Adopt(out); err == nil || !strings.Contains(err.Error(), "adopted already") {
		t.Errorf("Adopt twice: %v, want adopted already", err)
	}
	if s.Len() != 1 {
		t.Errorf("the store holds %d, want 1", s.Len())
	}
	if err := s.Remove(h); err != nil || s.Len() != 0 {
		t.Errorf("Remove of the adopted partition: %v, %d left", err, s.Len())
	}
}

// TestAdoptRefusesWritableMapping adopts an output the synthesizer still maps
// writable: refused (its bytes could change under the backend), and accepted
// once it is unmapped.
func TestAdoptRefusesWritableMapping(t *testing.T) {
	s := newTestStore(t)
	out, err := s.Output("mapped", sdk.CurveBLS12381, 100, 70)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(out.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(out.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	data[0] = 1
	if _, err := s.Adopt(out); err == nil || !strings.Contains(err.Error(), "still mapped writable") || !errors.Is(err, unix.EBUSY) {
		t.Errorf("Adopt of an output mapped writable: %v, want EBUSY saying it is still mapped writable", err)
	}
	if err := unix.Munmap(data); err != nil {
		t.Fatal(err)
	}
	h, err := s.Adopt(out)
	if err != nil {
		t.Fatalf("Adopt once unmapped: %v", err)
	}
	head, err := s.ReadW(h, 1)
	if err != nil || head[0][0] != 1 {
		t.Errorf("ReadW after Adopt: %v, %v", head, err)
	}
}

// TestAdoptRefuses checks what Adopt refuses: a handle that is not a pending
// output of this store (another store's, one Write made, an inode unknown),
// one whose layout or path differs from what Output made, and any after Close.
func TestAdoptRefuses(t *testing.T) {
	s := newTestStore(t)
	otherStore := newTestStore(t)
	v := testcircuit.RandomVector(t, 4)
	written, err := s.Write("written", sdk.CurveBLS12381, v, v, v)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		out  func(out sdk.PartitionHandle) sdk.PartitionHandle
		want string
	}{
		{"another store's output", func(sdk.PartitionHandle) sdk.PartitionHandle {
			o, err := otherStore.Output("elsewhere", sdk.CurveBLS12381, 100, 70)
			if err != nil {
				t.Fatal(err)
			}
			return o
		}, "not an output of this store"},
		{"a partition Write made", func(sdk.PartitionHandle) sdk.PartitionHandle { return written }, "adopted already"},
		{"unknown inode", func(o sdk.PartitionHandle) sdk.PartitionHandle { o.Inode ^= 1 << 40; return o }, "not an output of this store"},
		{"other counts", func(o sdk.PartitionHandle) sdk.PartitionHandle { o.NbConstraints--; return o }, "is not the output this store made"},
		{"other path", func(o sdk.PartitionHandle) sdk.PartitionHandle { o.Path = "/proc/1/fd/3"; return o }, "is not the output this store made"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.Output("p", sdk.CurveBLS12381, 100, 70)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Remove(out)
			if _, err := s.Adopt(tc.out(out)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Adopt: %v, want an error saying %q", err, tc.want)
			}
			// The output stays pending: the real handle is still adopted.
			if _, err := s.Adopt(out); err != nil {
				t.Errorf("Adopt of the output itself after the refusal: %v", err)
			}
		})
	}
	out, err := s.Output("closed", sdk.CurveBLS12381, 100, 70)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Adopt(out); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Adopt after Close: %v, want closed", err)
	}
	if _, err := s.Output("late", sdk.CurveBLS12381, 100, 70); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Output after Close: %v, want closed", err)
	}
}

// TestOutputRejects checks Output's arguments, and that Remove and Close
// release pending outputs.
func TestOutputRejects(t *testing.T) {
	s := newTestStore(t)
	for _, tc := range []struct {
		name          string
		partition     string
		curve         sdk.Curve
		wires, consts uint64
		want          string
	}{
		{"bad name", "../x", sdk.CurveBLS12381, 10, 10, "bad partition name"},
		{"unknown curve", "x", "secp256k1", 10, 10, "unknown curve"},
		{"no wires", "x", sdk.CurveBLS12381, 0, 10, "0 wires"},
		{"too many constraints", "x", sdk.CurveBLS12381, 10, sdk.MaxPartitionElements + 1, "want 1.."},
	} {
		if _, err := s.Output(tc.partition, tc.curve, tc.wires, tc.consts); err == nil || !strings.Contains(strings.ToLower(err.Error()), tc.want) {
			t.Errorf("%s: Output = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	a, err := s.Output("a", sdk.CurveBLS12381, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Output("b", sdk.CurveBLS12381, 10, 10); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 {
		t.Fatalf("the store holds %d, want 2 pending outputs", s.Len())
	}
	if err := s.Remove(a); err != nil || s.Len() != 1 {
		t.Errorf("Remove of a pending output: %v, %d left", err, s.Len())
	}
	names, err := Held(os.Getpid())
	if err != nil || !slices.Contains(names, "b") || slices.Contains(names, "a") {
		t.Errorf("after Remove the process holds %v (%v), want b and not a", names, err)
	}
	if err := s.Close(); err != nil || s.Len() != 0 {
		t.Errorf("Close: %v, %d left", err, s.Len())
	}
}
