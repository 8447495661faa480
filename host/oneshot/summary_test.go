package oneshot

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/sdk"
)

// TestSummarySnakeCase: every key of summary.json is snake_case, the backend's
// description and the phases included, and each appears once.
func TestSummarySnakeCase(t *testing.T) {
	res := Result{Circuit: "merkle-d4-k2", KeyDigest: "ab", Total: time.Second,
		Backend: sdk.Description{Name: "zkhost-backend-cpu", Version: "v1", APIVersions: []uint32{1}, Curves: []sdk.Curve{"bls12-381"},
			Device: sdk.DeviceInfo{Kind: "cpu", Model: "x", Available: true, MemoryTotal: 1}, MaxInFlight: 1},
		Partitions: []PartitionResult{{Index: 0, Verified: true, Phases: []sdk.Phase{{Name: "msm_g1", Wall: time.Millisecond}}}}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile(`"([A-Za-z_]+)":`).FindAllStringSubmatch(string(b), -1)
	for _, k := range keys {
		if k[1] != strings.ToLower(k[1]) {
			t.Errorf("key %q is not snake_case in %s", k[1], b)
		}
	}
	for _, want := range []string{`"backend":{"name":"zkhost-backend-cpu"`, `"max_in_flight":1`, `"phases":[{"name":"msm_g1","start_ns":0,"wall_ns":1000000`, `"key_digest":"ab"`} {
		if strings.Count(string(b), want) != 1 {
			t.Errorf("summary lacks %s once: %s", want, b)
		}
	}
}
