package daemon

import (
	"errors"
	"testing"

	"github.com/zkhost/zkhost/sdk"
)

func TestPlaceOn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failedOn map[string]bool
		device   string
		others   []string
		want     bool
	}{
		{"never failed", nil, "dev0", []string{"dev1"}, true},
		{"failed elsewhere", map[string]bool{"dev1": true}, "dev0", []string{"dev1"}, true},
		{"failed here, another device may take it", map[string]bool{"dev0": true}, "dev0", []string{"dev1"}, false},
		{"failed here, no other device may take work", map[string]bool{"dev0": true}, "dev0", nil, true},
		{"failed on every device", map[string]bool{"dev0": true, "dev1": true}, "dev0", []string{"dev1"}, true},
		{"failed here and on one of two others", map[string]bool{"dev0": true, "dev1": true}, "dev0", []string{"dev1", "dev2"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := placeOn(tc.failedOn, tc.device, tc.others); got != tc.want {
				t.Errorf("placeOn(%v, %s, %v) = %v, want %v", tc.failedOn, tc.device, tc.others, got, tc.want)
			}
		})
	}
}

// TestRefusedForGood: the permanent refusals that route a key away from a
// device, and the errors that must not.
func TestRefusedForGood(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{sdk.Permanentf(sdk.ErrResourceExhausted, "key too large"), true},
		{sdk.Permanentf(sdk.ErrUnimplemented, "H points in snarkjs's form"), true},
		{sdk.Errorf(sdk.ErrResourceExhausted, "busy"), false},
		{sdk.Errorf(sdk.ErrUnimplemented, "not retryable by default"), true},
		{sdk.Permanentf(sdk.ErrInvalidArgument, "bad partition"), false},
		{errors.New("plain"), false},
	} {
		if got := refusedForGood(tc.err); got != tc.want {
			t.Errorf("refusedForGood(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
