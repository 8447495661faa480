package oneshot

import (
	"encoding/json"
	"time"

	"github.com/zkhost/zkhost/sdk"
)

// summary.json's keys are snake_case throughout. The SDK's Description and Phase
// carry no JSON tags (they are Go types of the plugin contract, not a file
// format), so Result and PartitionResult write them through these mirrors.

type backendJSON struct {
	Name                     string      `json:"name"`
	Version                  string      `json:"version"`
	APIVersions              []uint32    `json:"api_versions"`
	Device                   deviceJSON  `json:"device"`
	Curves                   []sdk.Curve `json:"curves"`
	MaxInFlight              int         `json:"max_in_flight"`
	HostBytesPerConstraint   uint64      `json:"host_bytes_per_constraint"`
	DeviceBytesPerConstraint uint64      `json:"device_bytes_per_constraint"`
}

type deviceJSON struct {
	Kind        string `json:"kind"`
	Model       string `json:"model"`
	Index       int    `json:"index"`
	Available   bool   `json:"available"`
	Reason      string `json:"reason,omitempty"`
	MemoryTotal uint64 `json:"memory_total"`
	MemoryFree  uint64 `json:"memory_free"`
}

type phaseJSON struct {
	Name       string        `json:"name"`
	Start      time.Duration `json:"start_ns"`
	Wall       time.Duration `json:"wall_ns"`
	DeviceBusy time.Duration `json:"device_busy_ns"`
}

// MarshalJSON writes r with the backend's description in snake_case.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // without the method, so Marshal does not recurse
	d := r.Backend
	return json.Marshal(struct {
		plain
		Backend backendJSON `json:"backend"`
	}{plain(r), backendJSON{
		Name: d.Name, Version: d.Version, APIVersions: d.APIVersions, Curves: d.Curves, MaxInFlight: d.MaxInFlight,
		HostBytesPerConstraint: d.HostBytesPerConstraint, DeviceBytesPerConstraint: d.DeviceBytesPerConstraint,
		Device: deviceJSON{Kind: d.Device.Kind, Model: d.Device.Model, Index: d.Device.Index, Available: d.Device.Available,
			Reason: d.Device.Reason, MemoryTotal: d.Device.MemoryTotal, MemoryFree: d.Device.MemoryFree},
	}})
}

// MarshalJSON writes p with its phases in snake_case.
func (p PartitionResult) MarshalJSON() ([]byte, error) {
	type plain PartitionResult
	phases := make([]phaseJSON, len(p.Phases))
	for i, ph := range p.Phases {
		phases[i] = phaseJSON{Name: ph.Name, Start: ph.Start, Wall: ph.Wall, DeviceBusy: ph.DeviceBusy}
	}
	return json.Marshal(struct {
		plain
		Phases []phaseJSON `json:"phases"`
	}{plain(p), phases})
}
