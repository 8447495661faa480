package daemon

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestCircuitClass: a job submitted without a class gets its circuit's configured
// class; an explicit class wins.
func TestCircuitClass(t *testing.T) {
	base := filepath.Join(keysDir, small)
	urgent := fmt.Sprintf("\n[[circuit]]\nname = \"urgent\"\nccs = %q\nvk = %q\npk = %q\nclass = \"high\"\n", base+".ccs", base+".vk", base+".pk")
	f := start(t, opts{extra: urgent})
	ctx := testCtx(t, time.Minute)
	for _, tc := range []struct {
		circuit string
		class   api.Class
		want    api.Class
	}{
		{"urgent", api.ClassUnspecified, api.ClassHigh},
		{"urgent", api.ClassLow, api.ClassLow},
		{small, api.ClassUnspecified, api.ClassNormal},
	} {
		job := f.submit(ctx, tc.circuit, tc.class, witnesses(t, small, 1, 300))
		if job.Class != tc.want {
			t.Errorf("%s submitted as %v: class %v, want %v", tc.circuit, tc.class, job.Class, tc.want)
		}
		f.await(ctx, job.ID)
	}
}
