package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRanges: a setting outside its sane range is refused naming the key and
// the bound; the bounds themselves and the documented zeros are accepted.
func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		text, key, want string // want: empty when the config is accepted
	}{
		{"[retry]\nprove_timeout = \"1ns\"\n", "retry.prove_timeout", `1ns is below the least allowed, 1s ("0s" derives it from the partition's size)`},
		{"[retry]\nprove_timeout = \"25h\"\n", "retry.prove_timeout", "25h is above the most allowed, 24h"},
		{"[retry]\nprove_timeout = \"0s\"\n", "", ""},
		{"[retry]\nprove_timeout = \"1s\"\n", "", ""},
		{"[retry]\nprove_timeout = \"24h\"\n", "", ""},
		{"[retry]\nbackoff_base = \"1ms\"\n", "retry.backoff_base", "1ms is below the least allowed, 10ms"},
		{"[retry]\nbackoff_base = \"11m\"\nbackoff_max = \"11m\"\n", "retry.backoff_base", "11m is above the most allowed, 10m"},
		{"[retry]\nbackoff_max = \"2h\"\n", "retry.backoff_max", "2h is above the most allowed, 1h"},
		{"[retry]\nmax_attempts = 101\n", "retry.max_attempts", "101 is above the most allowed, 100"},
		{"[journal]\nreserve = \"1TiB\"\n", "journal.reserve", "1TiB is above the most allowed, 64GiB"},
		{"[journal]\nreserve = \"4KiB\"\n", "journal.reserve", `4KiB is below the least allowed, 1MiB ("0" keeps no reserve)`},
		{"[journal]\nreserve = \"0\"\n", "", ""},
		{"[journal]\nreserve = \"64GiB\"\n", "", ""},
		{"[journal]\nretention = \"1s\"\n", "journal.retention", `1s is below the least allowed, 1m ("0s" keeps finished jobs forever)`},
		{"[journal]\nretention = \"100000h\"\n", "journal.retention", "100000h is above the most allowed, 87600h"},
		{"[keys]\nidle_eviction = \"1ms\"\n", "keys.idle_eviction", "1ms is below the least allowed, 1m"},
		{"[keys]\nidle_eviction = \"200h\"\n", "keys.idle_eviction", "200h is above the most allowed, 168h"},
		{"[keys]\nidle_eviction = \"0s\"\n", "", ""},
		{"[timeline]\nmax_size = \"1TiB\"\n", "timeline.max_size", "1TiB is above the most allowed, 64GiB"},
		{"[timeline]\nkeep = 1000\n", "timeline.keep", "1000 is above the most allowed, 100"},
		{"[health]\ncrash_window = \"10ms\"\n", "health.crash_window", "10ms is below the least allowed, 1s"},
		{"[health]\ncrash_window = \"169h\"\n", "health.crash_window", "169h is above the most allowed, 168h"},
		{"[health]\ncrash_limit = 1001\n", "health.crash_limit", "1001 is above the most allowed, 1000"},
		{"[synthesis]\ncores = 5000\n", "synthesis.cores", "5000 is above the most allowed, 4096"},
		{"[[device]]\nin_flight = 65\n", "device[0].in_flight", "65 is above the most allowed, 64"},
		{"[[device]]\nindex = 1024\n", "device[0].index", "1024 is above the most allowed, 1023"},
		{"[[circuit]]\nname = \"c\"\nkeys = \"/k\"\nsynthesizer = \"/s\"\nsynthesizer_timeout = \"100ms\"\n", "circuit[0].synthesizer_timeout", "100ms is below the least allowed, 1s"},
		{"[cluster]\nembedded = true\nack_wait = \"500ms\"\n", "cluster.ack_wait", "500ms is below the least allowed, 1s"},
		{"[cluster]\nembedded = true\nmax_deliver = 1000\n", "cluster.max_deliver", "1000 is above the most allowed, 100"},
		{"[cluster]\nembedded = true\npull = 100000\n", "cluster.pull", "100000 is above the most allowed, 4096"},
	} {
		_, err := parse([]byte(tc.text), "/etc/zkhost/zkhost.toml", testEnv())
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.text, err)
			}
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 1 {
			t.Errorf("%q: got %v, want one problem", tc.text, err)
			continue
		}
		if p := ce.Problems[0]; p.Key != tc.key || !strings.Contains(p.Message, tc.want) {
			t.Errorf("%q: got %s, want %s: ...%s", tc.text, p, tc.key, tc.want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Millisecond: "10ms", time.Second: "1s", time.Minute: "1m", 90 * time.Minute: "1h30m",
		24 * time.Hour: "24h", 24*time.Hour + time.Second: "24h0m1s",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
