package main

import (
	"io"
	"testing"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name            string
		args            []string
		env             map[string]string
		threads, flight int
		wantErr         bool
	}{
		{"defaults", nil, nil, 0, 1, false},
		{"flags", []string{"-threads", "8", "-max-in-flight", "2"}, nil, 8, 2, false},
		{"environment", nil, map[string]string{"ZKHOST_CPU_THREADS": "4", "ZKHOST_CPU_MAX_IN_FLIGHT": "3"}, 4, 3, false},
		{"flags beat environment", []string{"-threads=2"}, map[string]string{"ZKHOST_CPU_THREADS": "4"}, 2, 1, false},
		{"bad environment", nil, map[string]string{"ZKHOST_CPU_THREADS": "many"}, 0, 0, true},
		{"negative threads", []string{"-threads", "-1"}, nil, 0, 0, true},
		{"zero in flight", []string{"-max-in-flight", "0"}, nil, 0, 0, true},
		{"unknown flag", []string{"-gpu"}, nil, 0, 0, true},
		{"stray argument", []string{"serve"}, nil, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parseOptions(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (opts.Threads != tt.threads || opts.MaxInFlight != tt.flight) {
				t.Errorf("options %+v, want threads %d, in flight %d", opts, tt.threads, tt.flight)
			}
		})
	}
}
