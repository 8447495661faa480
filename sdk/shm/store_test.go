//go:build linux

package shm

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

func newTestStore(t *testing.T) *Store {
	t.Helper()
	s := NewStore()
	t.Cleanup(func() { s.Close() })
	return s
}

func TestWriteReadsBackThroughOpenPartition(t *testing.T) {
	s := newTestStore(t)
	for _, size := range []struct{ w, c int }{{1, 1}, {129, 128}, {1000, 1 << 12}} {
		W, A, B := testcircuit.RandomVector(t, size.w), testcircuit.RandomVector(t, size.c), testcircuit.RandomVector(t, size.c)
		name := "p-" + strings.Repeat("x", size.w%7+1)
		h, err := s.Write(name, sdk.CurveBLS12381, W, A, B)
		if err != nil {
			t.Fatal(err)
		}
		if target, err := os.Readlink(h.Path); err != nil || !strings.HasPrefix(target, "/memfd:zkhost-"+name) {
			t.Errorf("%s links to %q (%v), want the memfd zkhost-%s", h.Path, target, err, name)
		}
		p, err := sdk.OpenPartition(h)
		if err != nil {
			t.Fatalf("OpenPartition of a written partition (%d wires, %d constraints): %v", size.w, size.c, err)
		}
		for _, v := range []struct {
			name      string
			got, want []fr.Element
		}{{"W", p.W(), W}, {"A", p.A(), A}, {"B", p.B(), B}} {
			if len(v.got) != len(v.want) {
				t.Fatalf("%s has %d elements, want %d", v.name, len(v.got), len(v.want))
			}
			for i := range v.got {
				if !v.got[i].Equal(&v.want[i]) {
					t.Fatalf("%s[%d] differs", v.name, i)
				}
			}
		}
		p.Close()
		if held, err := Held(os.Getpid()); err != nil || len(held) != 1 || held[0] != name {
			t.Errorf("Held = %v, %v; want [%s]", held, err, name)
		}
		if err := s.Remove(h); err != nil {
			t.Fatal(err)
		}
		if held, err := Held(os.Getpid()); err != nil || len(held) != 0 {
			t.Errorf("after Remove, Held = %v, %v; want none", held, err)
		}
		if s.Len() != 0 {
			t.Errorf("after Remove the store holds %d partitions", s.Len())
		}
		if _, err := sdk.OpenPartition(h); sdk.KindOf(err) != sdk.ErrInvalidArgument {
			t.Errorf("OpenPartition after Remove = %v, want invalid_argument", err)
		}
		if err := s.Remove(h); err != nil {
			t.Errorf("second Remove: %v", err)
		}
	}
}

// TestWrittenPartitionIsSealed checks the guarantee itself: once Write returns,
// nothing (not even this process, through a writable descriptor of its own) can
// change, shrink or grow the file, or take a seal away.
func TestWrittenPartitionIsSealed(t *testing.T) {
	s := newTestStore(t)
	v := testcircuit.RandomVector(t, 300)
	h, err := s.Write("sealed", sdk.CurveBLS12381, v, v, v)
	if err != nil {
		t.Fatal(err)
	}
	checkSealed(t, h)
}

// checkSealed fails unless the partition h names is sealed: no write, resize,
// writable shared mapping or new seal gets through, even through a writable
// descriptor of this process's own.
func checkSealed(t *testing.T, h sdk.PartitionHandle) {
	t.Helper()
	f, err := os.OpenFile(h.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{1}, int64(h.AOffset)); err == nil {
		t.Error("a write to the sealed partition succeeded")
	}
	if err := f.Truncate(h.Size - sdk.PartitionAlign); err == nil {
		t.Error("shrinking the sealed partition succeeded")
	}
	if err := f.Truncate(h.Size + sdk.PartitionAlign); err == nil {
		t.Error("growing the sealed partition succeeded")
	}
	if _, err := unix.Mmap(int(f.Fd()), 0, int(h.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		t.Error("a writable shared mapping of the sealed partition succeeded")
	}
	got, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if err != nil || got&seals != seals {
		t.Errorf("seals %#x (%v), want at least %#x", got, err, seals)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_FUTURE_WRITE); err == nil {
		t.Error("a seal could be added after F_SEAL_SEAL")
	}
}

func TestConcurrentWrites(t *testing.T) {
	s := newTestStore(t)
	W, A := testcircuit.RandomVector(t, 64), testcircuit.RandomVector(t, 64)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			h, err := s.Write("c"+string(rune('0'+i)), sdk.CurveBLS12381, W, A, A)
			if err == nil {
				var p *sdk.Partition
				if p, err = sdk.OpenPartition(h); err == nil {
					p.Close()
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s.Len() != 8 {
		t.Errorf("the store holds %d partitions, want 8", s.Len())
	}
}

func TestWriteRejects(t *testing.T) {
	s := newTestStore(t)
	one, two := testcircuit.RandomVector(t, 1), testcircuit.RandomVector(t, 2)
	tests := []struct {
		name    string
		pname   string
		curve   sdk.Curve
		W, A, B []fr.Element
		want    string
	}{
		{"empty name", "", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"slash", "a/b", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"dot dot", "..", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"hidden", ".x", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"too long", strings.Repeat("a", 129), sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"curve", "c", sdk.CurveBN254, one, one, one, "curve"},
		{"no wires", "w", sdk.CurveBLS12381, nil, one, one, "W is empty"},
		{"no constraints", "a", sdk.CurveBLS12381, one, nil, nil, "A is empty"},
		{"length mismatch", "m", sdk.CurveBLS12381, one, one, two, "len(B) = 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Write(tc.pname, tc.curve, tc.W, tc.A, tc.B)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	if s.Len() != 0 {
		t.Errorf("rejected writes left %d partitions", s.Len())
	}
}

// TestRemoveRefusesAnotherPartition checks that a handle whose descriptor
// number now belongs to another partition (or to no partition of this store)
// removes nothing.
func TestRemoveRefusesAnotherPartition(t *testing.T) {
	s := newTestStore(t)
	v := testcircuit.RandomVector(t, 4)
	h, err := s.Write("kept", sdk.CurveBLS12381, v, v, v)
	if err != nil {
		t.Fatal(err)
	}
	stale := h
	stale.Path = "/proc/1/fd/3"
	if err := s.Remove(stale); err == nil || !strings.Contains(err.Error(), "not this store's partition") {
		t.Errorf("Remove of a handle with another path = %v, want a refusal", err)
	}
	other := h
	other.Inode++
	if err := s.Remove(other); err != nil {
		t.Errorf("Remove of an unknown inode = %v, want nil (already gone)", err)
	}
	if s.Len() != 1 {
		t.Fatalf("the store holds %d partitions, want 1", s.Len())
	}
	if p, err := sdk.OpenPartition(h); err != nil {
		t.Errorf("the partition did not survive the refused removals: %v", err)
	} else {
		p.Close()
	}
}

func TestWriteKeepsNothingOnError(t *testing.T) {
	s := newTestStore(t)
	saved := fillFile
	defer func() { fillFile = saved }()
	var kept *os.File
	fillFile = func(f *os.File, h sdk.PartitionHandle, W, A, B []fr.Element) error {
		kept = f
		if _, err := f.Write([]byte("half")); err != nil {
			t.Fatal(err)
		}
		return syscall.ENOMEM
	}
	v := testcircuit.RandomVector(t, 4)
	_, err := s.Write("full", sdk.CurveBLS12381, v, v, v)
	if err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Fatalf("Write out of memory = %v, want an error saying it does not fit", err)
	}
	if s.Len() != 0 {
		t.Errorf("the failed write left %d partitions", s.Len())
	}
	if kept.Fd() != ^uintptr(0) {
		t.Errorf("the failed write's memfd is still open (descriptor %d)", kept.Fd())
	}
}

func TestClose(t *testing.T) {
	s := NewStore()
	v := testcircuit.RandomVector(t, 4)
	var hs []sdk.PartitionHandle
	for _, name := range []string{"a", "b", "c"} {
		h, err := s.Write(name, sdk.CurveBLS12381, v, v, v)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 0 {
		t.Errorf("after Close the store holds %d partitions", s.Len())
	}
	for _, h := range hs {
		if _, err := os.Stat(h.Path); err == nil {
			// The descriptor number may have been reused by now, but not for a
			// file of this inode.
			var st unix.Stat_t
			if unix.Stat(h.Path, &st) == nil && st.Ino == h.Inode {
				t.Errorf("%s is still open after Close", h.Path)
			}
		}
	}
	if _, err := s.Write("e", sdk.CurveBLS12381, v, v, v); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Write after Close = %v, want a closed error", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
