package main

import (
	"io"
	"testing"

	"github.com/zkhost/zkhost/cudabackend"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		env            map[string]string
		device, flight int
		memCap         uint64
		wantErr        bool
	}{
		{"defaults", nil, nil, 0, cudabackend.DefaultMaxInFlight, 0, false},
		{"flags", []string{"-device", "1", "-max-in-flight", "2", "-device-memory-cap", "24GiB"}, nil, 1, 2, 24 << 30, false},
		{"environment", nil, map[string]string{"ZKHOST_DEVICE_INDEX": "3", "ZKHOST_CUDA_MAX_IN_FLIGHT": "4", "ZKHOST_CUDA_DEVICE_MEMORY_CAP": "16GB"}, 3, 4, 16e9, false},
		{"flags beat environment", []string{"-device-memory-cap=1.5GiB"}, map[string]string{"ZKHOST_CUDA_DEVICE_MEMORY_CAP": "16GB"}, 0, cudabackend.DefaultMaxInFlight, 3 << 29, false},
		{"empty cap is no cap", []string{"-device-memory-cap="}, nil, 0, cudabackend.DefaultMaxInFlight, 0, false},
		{"bad cap", []string{"-device-memory-cap", "lots"}, nil, 0, 0, 0, true},
		{"percentage cap", []string{"-device-memory-cap", "50%"}, nil, 0, 0, 0, true},
		{"zero cap", nil, map[string]string{"ZKHOST_CUDA_DEVICE_MEMORY_CAP": "0"}, 0, 0, 0, true},
		{"bad environment", nil, map[string]string{"ZKHOST_CUDA_MAX_IN_FLIGHT": "many"}, 0, 0, 0, true},
		{"negative device", []string{"-device", "-1"}, nil, 0, 0, 0, true},
		{"zero in flight", []string{"-max-in-flight", "0"}, nil, 0, 0, 0, true},
		{"stray argument", []string{"serve"}, nil, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parseOptions(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (opts.Device != tt.device || opts.MaxInFlight != tt.flight || opts.DeviceMemoryCap != tt.memCap) {
				t.Errorf("options %+v, want device %d, in flight %d, cap %d", opts, tt.device, tt.flight, tt.memCap)
			}
		})
	}
}
