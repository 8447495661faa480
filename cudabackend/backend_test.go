package cudabackend

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/cudabackend/gpu"
	"github.com/zkhost/zkhost/sdk"
)

// On a machine without a usable GPU (or a build without CUDA) the backend must
// describe itself with no device and refuse work with a typed, clear error: never
// crash. On a GPU machine the conformance suite (scripts/gpu-run.sh) covers the rest.
func TestNoGPU(t *testing.T) {
	if _, err := gpu.DeviceInfo(0); err == nil {
		t.Skip("a GPU is present: the conformance suite covers this machine")
	} else if !errors.Is(err, gpu.ErrUnavailable) {
		t.Fatalf("device info without a GPU: %v, want an error wrapping gpu.ErrUnavailable", err)
	}
	b := New(Options{})
	defer b.Close()
	ctx := context.Background()
	d, err := b.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Device.Available || d.Device.Reason == "" || d.Device.Kind != "cuda" || d.Name != Name {
		t.Fatalf("describe without a GPU: %+v", d)
	}
	if len(d.APIVersions) != 1 || d.APIVersions[0] != sdk.APIVersion || d.MaxInFlight < 1 {
		t.Fatalf("describe: %+v", d)
	}
	if _, err := b.LoadKey(ctx, sdk.KeyRef{ID: "k", Path: "/nonexistent"}); sdk.KindOf(err) != sdk.ErrUnavailable {
		t.Fatalf("load key without a GPU: %v, want unavailable", err)
	}
	_, err = b.Prove(ctx, sdk.ProveRequest{KeyID: "k"})
	if sdk.KindOf(err) != sdk.ErrUnavailable || !sdk.IsRetryable(err) {
		t.Fatalf("prove without a GPU: %v, want a retryable unavailable error", err)
	}
	if err := b.UnloadKey(ctx, "k"); err != nil {
		t.Fatal(err)
	}
}

func TestAdmission(t *testing.T) {
	b := New(Options{})
	b.deviceTotal = 10 << 30
	if err := b.admit(6<<30, false); err != nil {
		t.Fatal(err)
	}
	// 9 GiB admissible (1 GiB reserved): 6 in use, 4 more do not fit.
	err := b.admit(4<<30, false)
	if sdk.KindOf(err) != sdk.ErrResourceExhausted || !sdk.IsRetryable(err) {
		t.Fatalf("over-commit: %v, want a retryable resource_exhausted", err)
	}
	if err := b.admit(3<<30, true); err != nil {
		t.Fatalf("what fits was refused: %v", err)
	}
}

// TestCapLimitsAdmission checks that the device memory cap is what admission
// hands out (less the reserve), as if the card had no more.
func TestCapLimitsAdmission(t *testing.T) {
	b := New(Options{DeviceMemoryCap: 16 << 30})
	b.deviceTotal = min(141<<30, b.opts.DeviceMemoryCap) // what New does with a GPU
	if got, want := b.limit(), uint64(15<<30); got != want {
		t.Fatalf("limit under a 16 GiB cap = %d, want %d", got, want)
	}
	if err := b.admit(16<<30, true); sdk.KindOf(err) != sdk.ErrResourceExhausted {
		t.Fatalf("16 GiB under a 16 GiB cap: %v, want resource_exhausted", err)
	}
}

// TestPerConstraint checks what Describe declares per constraint: the working
// memory of one proof at 2^24, about 690 bytes (the G1 and G2 MSMs at once),
// not the 64 the first estimate said.
func TestPerConstraint(t *testing.T) {
	got := perConstraint(gpu.BoundResidency(132))
	if got < 600 || got > 800 {
		t.Fatalf("perConstraint = %d bytes, want about 690", got)
	}
}

// TestNewDefaults: options left at zero get their defaults.
func TestNewDefaults(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	if b.opts.MaxInFlight != DefaultMaxInFlight || b.opts.StageThreads != DefaultStageThreads || b.opts.MSMPrecompute != gpu.MSMMaxDepth {
		t.Fatalf("New(Options{}): MaxInFlight %d, StageThreads %d, MSMPrecompute %d; want %d, %d and %d",
			b.opts.MaxInFlight, b.opts.StageThreads, b.opts.MSMPrecompute, DefaultMaxInFlight, DefaultStageThreads, gpu.MSMMaxDepth)
	}
}

// TestLoadRefusal checks when a key that fits no plan is refused for good: a
// device whose whole memory, nothing else on it, cannot hold even the key's
// least (lean, one slot) plan refuses it permanently, naming that least, so the
// host tries other devices; a device that could hold it empty refuses it for now
// (other keys hold the room), retryable.
func TestLoadRefusal(t *testing.T) {
	n := uint64(1) << 22
	for _, tc := range []struct {
		curve     ecc.ID
		total     uint64
		permanent bool
	}{
		{ecc.BLS12_381, 64 << 20, true},
		{ecc.BLS12_381, 16 << 30, false},
		{ecc.BN254, 64 << 20, true},
		{ecc.BN254, 16 << 30, false},
	} {
		s := gpu.KeyShape{Curve: tc.curve, LogN: 22, NbWires: n, NbPublic: 1, NbA: n, NbB: n, NbK: n - 1, NbZ: n - 1}
		b := New(Options{DeviceMemoryCap: tc.total})
		b.deviceTotal = tc.total // what New does with a GPU under the cap
		err := b.loadRefusal(s, "k", errors.New("no room left"))
		if sdk.KindOf(err) != sdk.ErrResourceExhausted || sdk.IsRetryable(err) == tc.permanent {
			t.Errorf("%s device of %d MiB: %v (retryable %v), want resource_exhausted, permanent %v", tc.curve, tc.total>>20, err, sdk.IsRetryable(err), tc.permanent)
		}
		if tc.permanent && !strings.Contains(err.Error(), "needs at least") {
			t.Errorf("device of %d MiB: %q does not name the least it needs", tc.total>>20, err)
		}
	}
}

// TestDescribeCurves: the backend declares the curves it was told to prove on,
// both by default (DefaultCurves), so that the host routes another curve's
// keys elsewhere.
func TestDescribeCurves(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		curves []sdk.Curve
		want   []sdk.Curve
	}{
		{nil, []sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254}},
		{[]sdk.Curve{sdk.CurveBLS12381}, []sdk.Curve{sdk.CurveBLS12381}},
		{[]sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254}, []sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254}},
		{[]sdk.Curve{sdk.CurveBN254}, []sdk.Curve{sdk.CurveBN254}},
	} {
		b := New(Options{Curves: tc.curves})
		d, err := b.Describe(ctx)
		b.Close()
		if err != nil || !slices.Equal(d.Curves, tc.want) {
			t.Errorf("Options.Curves %v: Describe declares %v (%v), want %v", tc.curves, d.Curves, err, tc.want)
		}
	}
}
