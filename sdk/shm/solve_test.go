//go:build linux

package shm

import (
	"errors"
	"os"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestWriteWith writes a partition through fill and reads it back as a
// backend does; the result is sealed like Write's.
func TestWriteWith(t *testing.T) {
	s := newTestStore(t)
	W, A, B := testcircuit.RandomVector(t, 1000), testcircuit.RandomVector(t, 1<<12), testcircuit.RandomVector(t, 1<<12)
	h, err := s.WriteWith("direct", sdk.CurveBLS12381, uint64(len(W)), uint64(len(A)), func(w, a, b []fr.Element) error {
		if len(w) != len(W) || len(a) != len(A) || len(b) != len(B) {
			t.Fatalf("fill got %d, %d, %d elements, want %d, %d, %d", len(w), len(a), len(b), len(W), len(A), len(B))
		}
		copy(w, W)
		copy(a, A)
		copy(b, B)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := sdk.OpenPartition(h)
	if err != nil {
		t.Fatalf("OpenPartition: %v", err)
	}
	defer p.Close()
	for _, v := range []struct {
		name      string
		got, want []fr.Element
	}{{"W", p.W(), W}, {"A", p.A(), A}, {"B", p.B(), B}} {
		for i := range v.want {
			if !v.got[i].Equal(&v.want[i]) {
				t.Fatalf("%s[%d] differs", v.name, i)
			}
		}
	}
	checkSealed(t, h)
}

// TestWriteWithKeepsNothingOnError: fill's error comes back as it is, and
// neither the partition nor its memfd is kept.
func TestWriteWithKeepsNothingOnError(t *testing.T) {
	s := newTestStore(t)
	unsatisfied := errors.New("constraint #3 is not satisfied")
	_, err := s.WriteWith("bad", sdk.CurveBLS12381, 10, 10, func(W, A, B []fr.Element) error {
		W[0].SetOne()
		return unsatisfied
	})
	if !errors.Is(err, unsatisfied) {
		t.Fatalf("WriteWith = %v, want fill's error", err)
	}
	if s.Len() != 0 {
		t.Errorf("the failed write left %d partitions", s.Len())
	}
	if held, err := Held(os.Getpid()); err != nil || len(held) != 0 {
		t.Errorf("after the failed write, Held = %v, %v; want none", held, err)
	}
	if _, err := s.WriteWith("bad name!", sdk.CurveBLS12381, 10, 10, func(W, A, B []fr.Element) error { return nil }); err == nil {
		t.Error("a bad name was accepted")
	}
}
