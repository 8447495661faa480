package daemon

import (
	"testing"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/config"
)

// TestSizeSynthesis: cores and workers the config leaves are sized to the
// devices, all but a core per device when every circuit is compact; what the
// config gives stays.
func TestSizeSynthesis(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		syn                  config.Synthesis
		compact              bool
		devices              int
		wantCores, wantWorks int
	}{
		{"default, full partitions", config.Synthesis{Cores: 12, Workers: 12}, false, 1, 12, 12},
		{"default, compact, one device", config.Synthesis{Cores: 12, Workers: 12}, true, 1, 15, 15},
		{"default, compact, two devices", config.Synthesis{Cores: 12, Workers: 12}, true, 2, 14, 14},
		{"cores given", config.Synthesis{Cores: 10, Workers: 10, CoresSet: true}, true, 1, 10, 10},
		{"workers given", config.Synthesis{Cores: 12, Workers: 4, WorkersSet: true}, true, 1, 15, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Daemon{cfg: &config.Config{Synthesis: tc.syn}, log: hclog.NewNullLogger(),
				devices: make([]*deviceEntry, tc.devices), circuits: map[string]*circuitEntry{"c": {}}}
			if tc.compact {
				d.circuits["c"].cw = &compactW{}
			}
			d.sizeSynthesis(16)
			if d.synthCores != tc.wantCores || d.synthWorkers != tc.wantWorks {
				t.Fatalf("cores %d, workers %d; want %d and %d", d.synthCores, d.synthWorkers, tc.wantCores, tc.wantWorks)
			}
		})
	}
}
