//go:build !cuda

package gpu

import (
	"errors"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// TestStubUnavailable checks that the default build answers every call with
// ErrUnavailable and a reason, and never panics.
func TestStubUnavailable(t *testing.T) {
	if Available() {
		t.Fatal("Available() = true in a build without the cuda tag")
	}
	a := make([]fr.Element, 4)
	calls := map[string]func() error{
		"DeviceCount":      func() error { _, err := DeviceCount(); return err },
		"DeviceInfo":       func() error { _, err := DeviceInfo(0); return err },
		"Alloc":            func() error { _, err := Alloc(0, 1024); return err },
		"NewStream":        func() error { _, err := NewStream(0); return err },
		"NewEvent":         func() error { _, err := NewEvent(0); return err },
		"PrepareNTT":       func() error { return PrepareNTT[fr.Element](0, 10) },
		"ReleaseNTT":       func() error { return ReleaseNTT(0) },
		"NTT":              func() error { return NTT(0, a, Forward, DIF, false, NTTRadixDefault) },
		"NTTDevice":        func() error { return NTTDevice[fr.Element](&Buffer{}, 2, Inverse, DIT, true, NTTRadix2, nil) },
		"BN254 PrepareNTT": func() error { return PrepareNTT[bn254fr.Element](0, 10) },
		"BN254 NTT":        func() error { return NTT(0, make([]bn254fr.Element, 4), Inverse, DIT, true, NTTRadix4) },
		"BN254 NTTDevice": func() error {
			return NTTDevice[bn254fr.Element](&Buffer{}, 2, Forward, DIF, false, NTTRadixDefault, nil)
		},
		"SetPieces":        func() error { return (&G1Bases{}).SetPieces(2, 0) },
		"UploadBN254G1":    func() error { _, err := UploadBN254G1(0, nil); return err },
		"UploadBN254G2":    func() error { _, err := UploadBN254G2(0, nil); return err },
		"BN254 MSM":        func() error { _, _, err := (&BN254G1Bases{}).MSM(nil); return err },
		"BN254 Precompute": func() error { return (&BN254G2Bases{}).Precompute(2) },
		"SetOptions":       func() error { return (&Groth16Key{}).SetOptions(ProveOptions{DenseMSM: true}) },
		"ComputeH":         func() error { _, err := ComputeH(a, a, 2); return err },
		"ComputeHOn":       func() error { _, _, err := ComputeHOn(0, a, a, 2); return err },
		"ComputeHDevice": func() error {
			_, err := ComputeHDevice(&Buffer{}, &Buffer{}, &Buffer{}, 2, nil, true)
			return err
		},
		"Upload":   func() error { return (&Buffer{}).Upload([]byte{1}, 0, nil) },
		"Download": func() error { return (&Buffer{}).Download([]byte{1}, 0, nil) },
		"Zero":     func() error { return (&Buffer{}).Zero(0, 1, nil) },
		"Sync":     func() error { return (&Stream{}).Sync() },
		"Record":   func() error { return (&Event{}).Record(nil) },
		"Elapsed":  func() error { _, err := Elapsed(&Event{}, &Event{}); return err },
		"ProbeMadd": func() error {
			_, _, err := ProbeMadd(0, 2, 2, 1, make([]bls12381.G1Affine, 2))
			return err
		},
		"ProbeFmul": func() error {
			_, _, err := ProbeFmul(0, 1, 2, 1, make([]fp.Element, 1), make([]fp.Element, 1))
			return err
		},
		"NewSlot": func() error { _, err := (&Groth16Key{}).NewSlot(); return err },
		"Stage":   func() error { return (&Groth16Slot{}).Stage(a, a, a, 1) },
		"StageWith": func() error {
			return (&Groth16Slot{}).StageWith(4, 4, func(w, a, b []fr.Element) error { return nil })
		},
		"SetConstraints": func() error { return (&Groth16Key{}).SetConstraints(nil) },
		"StageCompactWith": func() error {
			return (&Groth16Slot{}).StageCompactWith(4, 0, func(o, b []uint64, v []fr.Element) error { return nil })
		},
		"ProveCompact": func() error { _, _, err := (&Groth16Key{}).ProveCompact(&Groth16Slot{}, 1, 0); return err },
		"StageCurve": func() error {
			b := make([]bn254fr.Element, 4)
			return StageCurve(&Groth16Slot{}, b, b, b, 1)
		},
		"StageWithCurve": func() error {
			return StageWithCurve(&Groth16Slot{}, 4, 4, func(w, a, b []bn254fr.Element) error { return nil })
		},
		"ProveCurve": func() error {
			_, _, err := ProveCurve(curve.BN254{}, &Groth16Key{}, &Groth16Slot{}, 1)
			return err
		},
		"LoadGroth16Key(BN254)": func() error { _, err := LoadGroth16Key(0, &keyfile.BN254Key{}, 0); return err },
	}
	checkUnavailable(t, calls)
	// Releasing what was never allocated is harmless.
	for name, err := range map[string]error{
		"Buffer.Free":  (&Buffer{}).Free(),
		"Stream.Close": (&Stream{}).Close(),
		"Event.Close":  (&Event{}).Close(),
	} {
		if err != nil {
			t.Errorf("%s = %v, want nil", name, err)
		}
	}
}

// checkUnavailable checks that every call answers ErrUnavailable with a reason.
func checkUnavailable(t *testing.T, calls map[string]func() error) {
	t.Helper()
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: err = %v, want ErrUnavailable", name, err)
			continue
		}
		if err.Error() == ErrUnavailable.Error() {
			t.Errorf("%s: error %q gives no reason", name, err)
		}
	}
}
