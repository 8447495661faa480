package daemon

import (
	"strings"
	"testing"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// TestCheckCurves: a backend that proves on none of the curves of the circuits
// the daemon serves is refused, naming the backend, the curves it declares and
// those the circuits need; one that proves on some of them is accepted (it takes
// only their partitions: TestDeviceOfOneCurve).
func TestCheckCurves(t *testing.T) {
	bls := &circuit.Circuit{Name: "chain-k8", Curve: sdk.CurveBLS12381}
	bn := &circuit.Circuit{Name: "bn-k8", Curve: sdk.CurveBN254}
	for _, tc := range []struct {
		name     string
		circuits map[string]*circuitEntry
		curves   []sdk.Curve
		want     string // "" when the backend is accepted
	}{
		{"covers the only circuit", map[string]*circuitEntry{"chain": {c: bls}}, []sdk.Curve{sdk.CurveBLS12381}, ""},
		{"covers both curves", map[string]*circuitEntry{"chain": {c: bls}, "bn": {c: bn}}, []sdk.Curve{sdk.CurveBN254, sdk.CurveBLS12381}, ""},
		{"covers one of two", map[string]*circuitEntry{"chain": {c: bls}, "bn": {c: bn}}, []sdk.Curve{sdk.CurveBLS12381}, ""},
		{"no circuits", map[string]*circuitEntry{}, nil, ""},
		{"another curve", map[string]*circuitEntry{"chain": {c: bls}}, []sdk.Curve{sdk.CurveBN254},
			`backend vendor proves on [bn254] only, and the circuits served need [bls12-381]`},
		{"no curve declared", map[string]*circuitEntry{"chain": {c: bls}, "bn": {c: bn}}, nil,
			`backend vendor declares no curve, and the circuits served need [bn254 bls12-381]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Daemon{circuits: tc.circuits}
			err := d.checkCurves(sdk.Description{Name: "vendor", Curves: tc.curves})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
