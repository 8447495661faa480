package daemon

import (
	"strings"
	"testing"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// TestCheckCurves: a backend must prove on the curve of every circuit the
// daemon serves; one that does not is refused naming the backend, the curves
// it declares, the curve it lacks and the circuit that needs it.
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
		{"no circuits", map[string]*circuitEntry{}, nil, ""},
		{"another curve", map[string]*circuitEntry{"chain": {c: bls}}, []sdk.Curve{sdk.CurveBN254},
			`backend vendor proves on [bn254] only, not bls12-381, the curve of circuit "chain"`},
		{"no curve declared", map[string]*circuitEntry{"chain": {c: bls}}, nil,
			`backend vendor declares no curve, not bls12-381, the curve of circuit "chain"`},
		{"one circuit's curve missing", map[string]*circuitEntry{"chain": {c: bls}, "bn": {c: bn}}, []sdk.Curve{sdk.CurveBLS12381},
			`backend vendor proves on [bls12-381] only, not bn254, the curve of circuit "bn"`},
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
