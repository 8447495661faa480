package keyreg

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

type key struct{ id string }

func ref(id string, d byte) sdk.KeyRef {
	return sdk.KeyRef{ID: id, Path: "/k/" + id, Digest: [32]byte{d}}
}

func TestLoadIdempotentAndConcurrent(t *testing.T) {
	var opens atomic.Int32
	r := New[*key](2, func(*key) {})
	open := func() (*key, sdk.KeyInfo, error) {
		opens.Add(1)
		return &key{"a"}, sdk.KeyInfo{HostBytes: 7}, nil
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			info, err := r.Load(context.Background(), ref("a", 1), open)
			if err != nil || info.HostBytes != 7 {
				t.Errorf("load: %v %v", info, err)
			}
		})
	}
	wg.Wait()
	if n := opens.Load(); n != 1 {
		t.Fatalf("opened %d times, want 1", n)
	}
	if _, err := r.Load(context.Background(), ref("a", 2), open); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Fatalf("other digest: %v", err)
	}
}

func TestLoadErrorIsNotKept(t *testing.T) {
	r := New[*key](1, func(*key) {})
	boom := sdk.Errorf(sdk.ErrDigestMismatch, "boom")
	if _, err := r.Load(context.Background(), ref("a", 1), func() (*key, sdk.KeyInfo, error) { return nil, sdk.KeyInfo{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if _, err := r.Acquire("a"); sdk.KindOf(err) != sdk.ErrKeyNotLoaded {
		t.Fatalf("acquire after failed load: %v", err)
	}
	if _, err := r.Load(context.Background(), ref("a", 1), func() (*key, sdk.KeyInfo, error) { return &key{}, sdk.KeyInfo{}, nil }); err != nil {
		t.Fatalf("retry: %v", err)
	}
}

func TestBadRefs(t *testing.T) {
	r := New[*key](1, func(*key) {})
	for _, rf := range []sdk.KeyRef{{Path: "/x"}, {ID: "x"}} {
		if _, err := r.Load(context.Background(), rf, nil); sdk.KindOf(err) != sdk.ErrInvalidArgument {
			t.Errorf("%+v: %v", rf, err)
		}
	}
}

func TestInFlightLimitAndUnloadWhileInUse(t *testing.T) {
	closed := map[string]int{}
	r := New[*key](2, func(k *key) { closed[k.id]++ })
	if _, err := r.Load(context.Background(), ref("a", 1), func() (*key, sdk.KeyInfo, error) { return &key{"a"}, sdk.KeyInfo{}, nil }); err != nil {
		t.Fatal(err)
	}
	l1, err := r.Acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	l2, err := r.Acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Acquire("a"); sdk.KindOf(err) != sdk.ErrResourceExhausted {
		t.Fatalf("third acquire: %v", err)
	}
	if _, err := r.Acquire("nope"); sdk.KindOf(err) != sdk.ErrKeyNotLoaded {
		t.Fatalf("unknown key: %v", err)
	}
	r.Unload("a")
	if closed["a"] != 0 {
		t.Fatal("closed while in use")
	}
	if len(r.IDs()) != 0 {
		t.Fatal("unloaded key still listed")
	}
	l1.Release()
	l1.Release() // idempotent
	if closed["a"] != 0 || r.InFlight() != 1 {
		t.Fatalf("closed %d, in flight %d", closed["a"], r.InFlight())
	}
	if l2.Key().id != "a" {
		t.Fatal("lease key")
	}
	l2.Release()
	if closed["a"] != 1 || r.InFlight() != 0 {
		t.Fatalf("closed %d, in flight %d", closed["a"], r.InFlight())
	}
	r.Unload("a") // unknown now: no-op
}

// TestCheckPartition refuses, by name, a partition that does not fit its key.
func TestCheckPartition(t *testing.T) {
	f := keyOfSizes(t, 10, 16)
	tests := []struct {
		name       string
		curve      sdk.Curve
		wires, nbc uint64
		substr     string // "" when the partition fits
	}{
		{"fits", sdk.CurveBLS12381, 10, 16, ""},
		{"fewer constraints than the domain", sdk.CurveBLS12381, 10, 3, ""},
		{"other wires", sdk.CurveBLS12381, 11, 16, "11 wires"},
		{"no constraints", sdk.CurveBLS12381, 10, 0, "no constraints"},
		{"above the domain", sdk.CurveBLS12381, 10, 17, "more than the domain size 16"},
		{"another curve", sdk.CurveBN254, 10, 16, "over bn254, key \"k\" over bls12-381"},
	}
	for _, tc := range tests {
		h := sdk.PartitionHandle{Curve: tc.curve, NbWires: tc.wires, NbConstraints: tc.nbc}
		err := CheckPartition(f, h, "k")
		if tc.substr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if sdk.KindOf(err) != sdk.ErrInvalidArgument || !strings.Contains(err.Error(), tc.substr) {
			t.Errorf("%s: %v, want an invalid argument naming %q", tc.name, err, tc.substr)
		}
	}
}

// keyOfSizes writes and opens a BLS12-381 key file of nbWires wires (one public) and a
// domain of domainSize, its points all the point at infinity: the checks here read
// only its sizes and curve.
func keyOfSizes(t *testing.T, nbWires, domainSize uint64) *keyfile.File {
	t.Helper()
	k := &keyfile.BLS12381Key{
		DomainSize: domainSize, NbWires: nbWires, NbPublic: 1,
		G1A: make([]bls12381.G1Affine, nbWires), G1B: make([]bls12381.G1Affine, nbWires),
		G1K: make([]bls12381.G1Affine, nbWires-1), G1Z: make([]bls12381.G1Affine, domainSize-1),
		G2B:       make([]bls12381.G2Affine, nbWires),
		InfinityA: make([]bool, nbWires), InfinityB: make([]bool, nbWires),
	}
	path := filepath.Join(t.TempDir(), "k.pk")
	if _, err := keyfile.Write(path, k); err != nil {
		t.Fatal(err)
	}
	f, err := keyfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
