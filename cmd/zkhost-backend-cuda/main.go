// Command zkhost-backend-cuda is zkhost's GPU backend: Groth16 (BLS12-381) on one
// NVIDIA GPU with zkhost's own CUDA kernels (package cudabackend), served to the
// host through go-plugin. The host starts it; run by hand it exits.
//
// Built with `make cuda` (nvcc, cudart linked statically). On a machine without
// a GPU it runs and answers Describe with no device; Prove is refused with a
// typed "unavailable" error.
//
// Flags, each with an environment variable the host may set instead:
//
//	-device N          ZKHOST_DEVICE_INDEX        CUDA device ordinal (default 0)
//	-max-in-flight N   ZKHOST_CUDA_MAX_IN_FLIGHT  proofs at once, each in its own slot (default cudabackend.DefaultMaxInFlight, 4)
//	-device-memory-cap SIZE  ZKHOST_CUDA_DEVICE_MEMORY_CAP  device memory to use at most, as if the card had no more
//	                   ("24GiB", "16GB"; default: all of it); keys that do not fit are streamed from host memory
//	-stage-threads N   ZKHOST_CUDA_STAGE_THREADS  threads that read a partition into pinned memory (default cudabackend.DefaultStageThreads, 4)
//
// And flags only, for with/without comparisons of the kernels (the host sets
// them from a device's [device.options]; none changes a proof):
//
//	-msm-precompute N  most precomputed copies a resident key keeps of each point set, as room allows (0 or 1: none; default 64)
//	-binary-split      run a resident key's MSMs over W witness-aware, W's 0s and 1s kept out of Pippenger (default true; false: dense)
//	-ntt-radix N       2 or 4: stages per step of H's NTT passes (default 4)
//	-lean-split        run a lean key's MSMs over W classified chunk by chunk on the host (default false: dense; experimental)
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zkhost/zkhost/cudabackend"
	"github.com/zkhost/zkhost/cudabackend/gpu"
	"github.com/zkhost/zkhost/internal/bytesize"
	"github.com/zkhost/zkhost/internal/envflag"
	"github.com/zkhost/zkhost/sdk"
)

func main() {
	// go-plugin owns stdout: nothing may print there before the handshake (this
	// binary links gnark-crypto, not gnark, whose logger prints there by default).
	opts, err := parseOptions(os.Args[1:], os.Getenv, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkhost-backend-cuda:", err)
		os.Exit(2)
	}
	log := sdk.NewLogger(cudabackend.Name)
	opts.Logger = log
	b := cudabackend.New(opts)
	err = sdk.Serve(b, sdk.WithLogger(log))
	b.Close()
	if err != nil {
		log.Error("serving", "error", err)
		os.Exit(1)
	}
}

// parseOptions reads the flags, each defaulting to its environment variable.
func parseOptions(args []string, getenv func(string) string, usage io.Writer) (cudabackend.Options, error) {
	var opts cudabackend.Options
	device, err := envflag.Int(getenv, "ZKHOST_DEVICE_INDEX", 0)
	if err != nil {
		return opts, err
	}
	inFlight, err := envflag.Int(getenv, "ZKHOST_CUDA_MAX_IN_FLIGHT", cudabackend.DefaultMaxInFlight)
	if err != nil {
		return opts, err
	}
	stage, err := envflag.Int(getenv, "ZKHOST_CUDA_STAGE_THREADS", cudabackend.DefaultStageThreads)
	if err != nil {
		return opts, err
	}
	snarkjsHEnv, err := envflag.Bool(getenv, "ZKHOST_CUDA_SNARKJS_H", true)
	if err != nil {
		return opts, err
	}
	fs := flag.NewFlagSet("zkhost-backend-cuda", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.IntVar(&opts.Device, "device", device, "CUDA device ordinal")
	fs.IntVar(&opts.MaxInFlight, "max-in-flight", inFlight, "proofs at once, each in its own slot (device buffers, streams, pinned staging: MaxInFlight per key, allocated at LoadKey)")
	fs.IntVar(&opts.StageThreads, "stage-threads", stage, "threads that read a partition into its slot's pinned staging (more speeds a proof proved alone and can slow a backlog, whose synthesis needs the cores)")
	fs.IntVar(&opts.MSMPrecompute, "msm-precompute", gpu.MSMMaxDepth, "most precomputed copies a resident key keeps of each of its point sets, as device memory allows (faster MSMs; 0 or 1: none)")
	binarySplit := fs.Bool("binary-split", true, "run a resident key's MSMs over W witness-aware: W's 0s and 1s kept out of Pippenger (false: dense, for comparisons)")
	leanSplit := fs.Bool("lean-split", false, "run a lean key's MSMs (a key whose proofs stream, under -device-memory-cap or on a small card) over W's scalars classified chunk by chunk on the host: 0s and 1s kept out of Pippenger (experimental)")
	radix := fs.Int("ntt-radix", int(gpu.NTTRadix4), "stages per step of H's NTT passes in shared memory, 2 or 4 (the same result; for comparisons)")
	curves := fs.String("curves", cmp.Or(getenv("ZKHOST_CUDA_CURVES"), cudabackend.CurveList(cudabackend.DefaultCurves)), "curves whose keys the backend proves, comma-separated (bls12-381, bn254); the host proves another curve's keys on another backend")
	snarkjsH := fs.Bool("snarkjs-h", snarkjsHEnv, "prove keys imported from a snarkjs .zkey (H in snarkjs's form); false leaves them to another backend of the host")
	capText := fs.String("device-memory-cap", getenv("ZKHOST_CUDA_DEVICE_MEMORY_CAP"), "device memory to use at most, as if the card had no more (\"24GiB\", \"16GB\"; empty: all of it); a key whose points, slots and proofs do not fit under it is streamed from pinned host memory chunk by chunk")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if opts.Device < 0 || opts.MaxInFlight < 1 {
		return opts, fmt.Errorf("-device is %d and -max-in-flight %d: want -device >= 0 and -max-in-flight >= 1", opts.Device, opts.MaxInFlight)
	}
	if opts.StageThreads < 1 {
		return opts, fmt.Errorf("-stage-threads is %d: want at least 1", opts.StageThreads)
	}
	if opts.MSMPrecompute < 0 || opts.MSMPrecompute > gpu.MSMMaxDepth {
		return opts, fmt.Errorf("-msm-precompute is %d: want 0 (none) to %d copies", opts.MSMPrecompute, gpu.MSMMaxDepth)
	}
	// Options count the points alone as one copy; 0 would mean the default.
	opts.MSMPrecompute = max(opts.MSMPrecompute, 1)
	if *radix != int(gpu.NTTRadix2) && *radix != int(gpu.NTTRadix4) {
		return opts, fmt.Errorf("-ntt-radix is %d: want 2 or 4", *radix)
	}
	opts.Prove = gpu.ProveOptions{DenseMSM: !*binarySplit, NTTRadix: gpu.NTTRadix(*radix), LeanSplit: *leanSplit}
	if opts.Curves, err = cudabackend.ParseCurves(*curves); err != nil {
		return opts, fmt.Errorf("-curves: %v", err)
	}
	opts.NoSnarkjsH = !*snarkjsH
	if *capText != "" {
		sz, err := bytesize.Parse(*capText)
		if err != nil {
			return opts, fmt.Errorf("-device-memory-cap: %v", err)
		}
		if sz.IsPercent() || sz.Bytes == 0 {
			return opts, fmt.Errorf("-device-memory-cap %q: want a size in bytes above zero, such as \"24GiB\"", *capText)
		}
		opts.DeviceMemoryCap = sz.Bytes
	}
	return opts, nil
}
