package config

import (
	"strings"
	"testing"
)

// TestLimits: the critical share of queued_partitions defaults to a tenth of
// it (rounded up, leaving other classes at least one partition), may be set
// below it, and is refused naming the key at or above it; stream_inputs has a
// default far below the API's ceiling.
func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       Limits
		err        string // a fragment of the error; "" when the text is valid
	}{
		{"none", "", Limits{StreamInputs: DefaultStreamInputs}, ""},
		{"a tenth held back", "queued_partitions = 30", Limits{QueuedPartitions: 30, CriticalReserve: 3, StreamInputs: DefaultStreamInputs}, ""},
		{"rounded up", "queued_partitions = 11", Limits{QueuedPartitions: 11, CriticalReserve: 2, StreamInputs: DefaultStreamInputs}, ""},
		{"room left for batch", "queued_partitions = 2", Limits{QueuedPartitions: 2, CriticalReserve: 1, StreamInputs: DefaultStreamInputs}, ""},
		{"a limit of one", "queued_partitions = 1", Limits{QueuedPartitions: 1, StreamInputs: DefaultStreamInputs}, ""},
		{"set", "queued_partitions = 30\ncritical_reserve = 10\nstream_inputs = 64",
			Limits{QueuedPartitions: 30, CriticalReserve: 10, StreamInputs: 64}, ""},
		{"none held back", "queued_partitions = 30\ncritical_reserve = 0", Limits{QueuedPartitions: 30, StreamInputs: DefaultStreamInputs}, ""},
		{"reserve not below the limit", "queued_partitions = 30\ncritical_reserve = 30", Limits{}, "limits.critical_reserve: 30 is not below limits.queued_partitions (30)"},
		{"negative stream inputs", "stream_inputs = -1", Limits{}, "limits.stream_inputs: -1 is below the least allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parse([]byte("[limits]\n"+tc.text+"\n"), "/etc/zk.toml", testEnv())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parse: %v, want an error saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Limits != tc.want {
				t.Errorf("limits = %+v, want %+v", c.Limits, tc.want)
			}
		})
	}
	if DefaultStreamInputs >= 1<<16 {
		t.Errorf("DefaultStreamInputs = %d, not below the API's ceiling", DefaultStreamInputs)
	}
}
