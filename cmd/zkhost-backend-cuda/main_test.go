package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/zkhost/zkhost/cudabackend"
	"github.com/zkhost/zkhost/cudabackend/gpu"
	"github.com/zkhost/zkhost/sdk"
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

// TestParseCurveOptions checks the options that keep a curve or snarkjs's key
// form off a device: both curves and both forms by default, narrowed by flag or
// environment (the host passes a [[device]]'s env table so), flags before the
// environment, and bad values refused naming the option.
func TestParseCurveOptions(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		curves   []sdk.Curve
		snarkjsH bool
		wantErr  string
	}{
		{"defaults", nil, nil, []sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254}, true, ""},
		{"flags", []string{"-curves", "bn254, bls12-381", "-snarkjs-h=false"}, nil, []sdk.Curve{sdk.CurveBN254, sdk.CurveBLS12381}, false, ""},
		{"environment", nil, map[string]string{"ZKHOST_CUDA_CURVES": "bn254", "ZKHOST_CUDA_SNARKJS_H": "false"}, []sdk.Curve{sdk.CurveBN254}, false, ""},
		{"flags beat environment", []string{"-curves=bls12-381", "-snarkjs-h"}, map[string]string{"ZKHOST_CUDA_CURVES": "bn254", "ZKHOST_CUDA_SNARKJS_H": "0"}, []sdk.Curve{sdk.CurveBLS12381}, true, ""},
		{"repeated curve", []string{"-curves", "bn254,bn254"}, nil, []sdk.Curve{sdk.CurveBN254}, true, ""},
		{"unknown curve", []string{"-curves", "bls12-377"}, nil, nil, false, `-curves: curve "bls12-377"`},
		{"bad environment", nil, map[string]string{"ZKHOST_CUDA_SNARKJS_H": "maybe"}, nil, false, "ZKHOST_CUDA_SNARKJS_H"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parseOptions(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(opts.Curves, tt.curves) || opts.NoSnarkjsH == tt.snarkjsH {
				t.Errorf("curves %v, snarkjs-h %v, err %v; want %v, %v", opts.Curves, !opts.NoSnarkjsH, err, tt.curves, tt.snarkjsH)
			}
		})
	}
}

// TestParseKernelOptions checks the flags that choose how the kernels run:
// their defaults, each set, and values out of range refused with the flag
// named. No environment variable reaches them.
func TestParseKernelOptions(t *testing.T) {
	env := map[string]string{"ZKHOST_CUDA_MSM_PRECOMPUTE": "0", "ZKHOST_CUDA_BINARY_SPLIT": "0", "ZKHOST_CUDA_NTT_RADIX": "2"}
	tests := []struct {
		name    string
		args    []string
		depth   int
		prove   gpu.ProveOptions
		wantErr string
	}{
		{"defaults, whatever the environment", nil, gpu.MSMMaxDepth, gpu.ProveOptions{NTTRadix: gpu.NTTRadix4}, ""},
		{"no copies", []string{"-msm-precompute=0"}, 1, gpu.ProveOptions{NTTRadix: gpu.NTTRadix4}, ""},
		{"the points alone", []string{"-msm-precompute", "1"}, 1, gpu.ProveOptions{NTTRadix: gpu.NTTRadix4}, ""},
		{"capped copies", []string{"-msm-precompute", "3"}, 3, gpu.ProveOptions{NTTRadix: gpu.NTTRadix4}, ""},
		{"dense radix 2", []string{"-binary-split=false", "-ntt-radix", "2"}, gpu.MSMMaxDepth, gpu.ProveOptions{DenseMSM: true, NTTRadix: gpu.NTTRadix2}, ""},
		{"lean split", []string{"-lean-split"}, gpu.MSMMaxDepth, gpu.ProveOptions{NTTRadix: gpu.NTTRadix4, LeanSplit: true}, ""},
		{"too many copies", []string{"-msm-precompute", "65"}, 0, gpu.ProveOptions{}, "-msm-precompute"},
		{"negative copies", []string{"-msm-precompute=-1"}, 0, gpu.ProveOptions{}, "-msm-precompute"},
		{"radix 8", []string{"-ntt-radix", "8"}, 0, gpu.ProveOptions{}, "-ntt-radix"},
		{"radix 0", []string{"-ntt-radix", "0"}, 0, gpu.ProveOptions{}, "-ntt-radix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := parseOptions(tt.args, func(k string) string { return env[k] }, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.MSMPrecompute != tt.depth || opts.Prove != tt.prove {
				t.Errorf("MSMPrecompute %d, Prove %+v; want %d, %+v", opts.MSMPrecompute, opts.Prove, tt.depth, tt.prove)
			}
		})
	}
}

// TestHelpNamesFlags checks that -h lists every flag, the kernels' among
// them, with what it does.
func TestHelpNamesFlags(t *testing.T) {
	var out bytes.Buffer
	if _, err := parseOptions([]string{"-h"}, func(string) string { return "" }, &out); err == nil {
		t.Fatal("-h: no error, want flag.ErrHelp")
	}
	for _, f := range []string{"-device", "-max-in-flight", "-device-memory-cap", "-stage-threads", "-msm-precompute", "-binary-split", "-ntt-radix", "-lean-split"} {
		if !strings.Contains(out.String(), f+" ") && !strings.Contains(out.String(), f+"\n") {
			t.Errorf("help does not name %s:\n%s", f, out.String())
		}
	}
}
