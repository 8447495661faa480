package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261203101500-c5e830caa287+dirty"}}
	for _, tc := range []struct {
		name   string
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		{"link-time version wins", "v1.2.3", stamped, "v1.2.3"},
		{"stamped module version", "", stamped, "v0.0.0-20261203101500-c5e830caa287+dirty"},
		{"blank link-time value ignored", "  ", stamped, "v0.0.0-20261203101500-c5e830caa287+dirty"},
		{"devel build", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"no build information", "", nil, "devel"},
	} {
		if got := resolve(tc.linked, tc.bi); got != tc.want {
			t.Errorf("%s: resolve(%q) = %q, want %q", tc.name, tc.linked, got, tc.want)
		}
	}
}
