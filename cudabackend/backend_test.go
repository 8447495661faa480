package cudabackend

import (
	"context"
	"errors"
	"testing"

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
