//go:build !cuda

package gpu

import (
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// TestMSMStubUnavailable checks that without CUDA every MSM call answers
// ErrUnavailable with a reason, and Free of never-uploaded bases is harmless.
func TestMSMStubUnavailable(t *testing.T) {
	p1 := make([]bls12381.G1Affine, 2)
	p2 := make([]bls12381.G2Affine, 2)
	sc := make([]fr.Element, 2)
	calls := map[string]func() error{
		"UploadG1":        func() error { _, err := UploadG1(0, p1); return err },
		"UploadG1Masked":  func() error { _, err := UploadG1Masked(0, p1, []bool{false, false}); return err },
		"UploadG2":        func() error { _, err := UploadG2(0, p2); return err },
		"UploadG2Masked":  func() error { _, err := UploadG2Masked(0, p2, []bool{false, false}); return err },
		"G1 MSM":          func() error { _, _, err := (&G1Bases{}).MSM(sc); return err },
		"G1 MSMDevice":    func() error { _, _, err := (&G1Bases{}).MSMDevice(&Buffer{}, 0, 2, nil); return err },
		"G2 MSM":          func() error { _, _, err := (&G2Bases{}).MSM(sc); return err },
		"G2 MSMDevice":    func() error { _, _, err := (&G2Bases{}).MSMDevice(&Buffer{}, 0, 2, nil); return err },
		"ClassifyScalars": func() error { _, err := ClassifyScalars(&Buffer{}, 0, 2, nil); return err },
		"G1 MSMSplit":     func() error { _, _, err := (&G1Bases{}).MSMSplit(&ScalarSplit{}, 0, 2, nil); return err },
		"G2 MSMSplit":     func() error { _, _, err := (&G2Bases{}).MSMSplit(&ScalarSplit{}, 0, 2, nil); return err },
		"G1 Precompute":   func() error { return (&G1Bases{}).Precompute(4) },
		"G2 Precompute":   func() error { return (&G2Bases{}).Precompute(4) },
		"PinnedScalars":   func() error { _, err := NewPinnedScalars(4); return err },
	}
	checkUnavailable(t, calls)
	if err := (&G1Bases{}).Free(); err != nil {
		t.Errorf("G1Bases.Free = %v", err)
	}
	if err := (&G2Bases{}).Free(); err != nil {
		t.Errorf("G2Bases.Free = %v", err)
	}
	if err := (&ScalarSplit{}).Free(); err != nil {
		t.Errorf("ScalarSplit.Free = %v", err)
	}
	if n := (&G1Bases{}).Len(); n != 0 {
		t.Errorf("Len = %d", n)
	}
}
