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
		stage          int
		wantErr        bool
	}{
		{"defaults", nil, nil, 0, cudabackend.DefaultMaxInFlight, 0, cudabackend.DefaultStageThreads, false},
		{"flags", []string{"-device", "1", "-max-in-flight", "2", "-device-memory-cap", "24GiB", "-stage-threads", "8"}, nil, 1, 2, 24 << 30, 8, false},
		{"environment", nil, map[string]string{"ZKHOST_DEVICE_INDEX": "3", "ZKHOST_CUDA_MAX_IN_FLIGHT": "4", "ZKHOST_CUDA_DEVICE_MEMORY_CAP": "16GB", "ZKHOST_CUDA_STAGE_THREADS": "2"}, 3, 4, 16e9, 2, false},
		{"flags beat environment", []string{"-device-memory-cap=1.5GiB", "-stage-threads=6"}, map[string]string{"ZKHOST_CUDA_DEVICE_MEMORY_CAP": "16GB", "ZKHOST_CUDA_STAGE_THREADS": "2"}, 0, cudabackend.DefaultMaxInFlight, 3 << 29, 6, false},
		{"empty cap is no cap", []string{"-device-memory-cap="}, nil, 0, cudabackend.DefaultMaxInFlight, 0, cudabackend.DefaultStageThreads, false},
		{"bad cap", []string{"-device-memory-cap", "lots"}, nil, 0, 0, 0, 0, true},
		{"percentage cap", []string{"-device-memory-cap", "50%"}, nil, 0, 0, 0, 0, true},
		{"zero cap", nil, map[string]string{"ZKHOST_CUDA_DEVICE_MEMORY_CAP": "0"}, 0, 0, 0, 0, true},
		{"bad environment", nil, map[string]string{"ZKHOST_CUDA_MAX_IN_FLIGHT": "many"}, 0, 0, 0, 0, true},
		{"bad stage environment", nil, map[string]string{"ZKHOST_CUDA_STAGE_THREADS": "all"}, 0, 0, 0, 0, true},
		{"negative device", []string{"-device", "-1"}, nil, 0, 0, 0, 0, true},
		{"zero in flight", []string{"-max-in-flight", "0"}, nil, 0, 0, 0, 0, true},
		{"zero stage threads", []string{"-stage-threads", "0"}, nil, 0, 0, 0, 0, true},
		{"negative stage environment", nil, map[string]string{"ZKHOST_CUDA_STAGE_THREADS": "-2"}, 0, 0, 0, 0, true},
		{"stray argument", []string{"serve"}, nil, 0, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parseOptions(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (opts.Device != tt.device || opts.MaxInFlight != tt.flight || opts.DeviceMemoryCap != tt.memCap || opts.StageThreads != tt.stage) {
				t.Errorf("options %+v, want device %d, in flight %d, cap %d, stage threads %d", opts, tt.device, tt.flight, tt.memCap, tt.stage)
			}
		})
	}
}
