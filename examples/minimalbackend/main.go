// Command minimalbackend is a complete zkhost backend written from scratch against
// the SDK alone: the four methods of sdk.Backend, a key registry, one proof at a
// time, cancellation, and sdk.Serve. It proves on the CPU with the SDK's reference
// prover (sdk/refprover); a backend for an accelerator replaces the Prove body with
// its own device code and keeps the rest.
//
// Point a [[device]] at the built binary and prove it with the conformance suite:
// sdktest.Run(t, sdktest.Config{BackendPath: "path/to/minimalbackend"}).
//
// What an author decides, and how this example decides it:
//
//   - Memory. Describe declares the host memory one proof in flight needs per
//     constraint beyond the partition file (the host's budget reserves it). Measure
//     it: run your Prove on circuits of two sizes under a heap profiler or
//     /usr/bin/time and take the peak per constraint (refprover's
//     BenchmarkProveMemory does this for the reference prover); round up.
//   - Garbage collection. A proof's vectors hold no pointers, so a tight GOGC keeps
//     the heap near the live data without costing scan time; this example sets 20.
//   - Standard output belongs to go-plugin's handshake: log to standard error
//     (sdk.NewLogger). The SDK's backend packages link gnark-crypto, not gnark; a
//     backend that links gnark itself silences gnark's logger, which writes to
//     stdout by default, before anything else (logger.Disable).
//   - Cancellation. gnark-crypto's MSMs cannot be interrupted, so each proof runs in
//     a child process of this binary (refprover.Worker) that a cancel kills; Prove
//     then returns sdk.ErrCanceled.
package main

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"time"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/keyreg"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// hostBytesPerConstraint is what one proof needs beyond the partition: the
// reference prover's measured peak (BENCHMARKS.md, "Heap per proof"), rounded up.
const hostBytesPerConstraint = 1536

func main() {
	debug.SetGCPercent(20)
	if len(os.Args) > 1 && os.Args[1] == refprover.WorkerArg {
		os.Exit(refprover.ServeWorker()) // Worker.Prove: one proof, in a process of its own
	}
	log := sdk.NewLogger("minimalbackend")
	self, err := os.Executable()
	if err != nil {
		log.Error("finding this executable", "error", err)
		os.Exit(1)
	}
	b := &backend{
		worker: refprover.Worker{Path: self, Log: log},
		cpu:    make(chan struct{}, 1),
		keys:   keyreg.New(1, func(k *key) { k.close() }),
	}
	err = sdk.Serve(b, sdk.WithLogger(log))
	b.keys.UnloadAll()
	if err != nil {
		log.Error("serving", "error", err)
		os.Exit(1)
	}
}

// backend proves one partition at a time on this machine's cores.
type backend struct {
	worker refprover.Worker
	cpu    chan struct{} // held by the proof computing
	keys   *keyreg.Registry[*key]
}

// key is a loaded proving key: the file mapped and checked, and the same file kept
// open for the workers to inherit.
type key struct {
	file *keyfile.File
	fd   *os.File
}

func (k *key) close() {
	k.file.Close()
	k.fd.Close()
}

// Describe says what the backend is and what one proof costs it.
func (b *backend) Describe(ctx context.Context) (sdk.Description, error) {
	return sdk.Description{
		Name:                   "minimalbackend",
		Version:                "0.1.0",
		APIVersions:            []uint32{sdk.APIVersion},
		Device:                 sdk.DeviceInfo{Kind: "cpu", Model: "this machine's cores", Available: true},
		Curves:                 []sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254},
		MaxInFlight:            1,
		HostBytesPerConstraint: hostBytesPerConstraint,
	}, nil
}

// LoadKey maps and checks a key file once per ID; keyreg makes a repeated load
// with the same digest a no-op and one with another digest an error.
func (b *backend) LoadKey(ctx context.Context, ref sdk.KeyRef) (sdk.KeyInfo, error) {
	return b.keys.Load(ctx, ref, func() (*key, sdk.KeyInfo, error) {
		fd, err := os.Open(ref.Path) // before the check, so the file checked is the file the workers map
		if err != nil {
			return nil, sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
		}
		f, err := keyreg.OpenKeyFile(ref) // header digest and every section's digest
		if err != nil {
			fd.Close()
			return nil, sdk.KeyInfo{}, err
		}
		opened, err1 := fd.Stat()
		checked, err2 := os.Stat(ref.Path)
		if err := errors.Join(err1, err2); err != nil || !os.SameFile(opened, checked) {
			f.Close()
			fd.Close()
			return nil, sdk.KeyInfo{}, sdk.Errorf(sdk.ErrDigestMismatch, "load key %q: %s changed while it was checked", ref.ID, ref.Path)
		}
		return &key{file: f, fd: fd}, sdk.KeyInfo{HostBytes: uint64(f.Size())}, nil
	})
}

// UnloadKey forgets a key; a proof using it keeps it until it returns.
func (b *backend) UnloadKey(ctx context.Context, keyID string) error {
	b.keys.Unload(keyID)
	return nil
}

// Prove checks the partition against the key, maps it (OpenPartition checks its
// seals), waits for the CPU and proves in a worker.
func (b *backend) Prove(ctx context.Context, req sdk.ProveRequest) (sdk.ProveResult, error) {
	start := time.Now()
	lease, err := b.keys.Acquire(req.KeyID) // ErrKeyNotLoaded, or ErrResourceExhausted when busy
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer lease.Release()
	k := lease.Key()
	if err := keyreg.CheckPartition(k.file, req.Partition, req.KeyID); err != nil {
		return sdk.ProveResult{}, err
	}
	part, err := sdk.OpenPartition(req.Partition)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer part.Close() // held while the worker maps the same file

	select {
	case b.cpu <- struct{}{}:
	case <-ctx.Done():
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove: %v", ctx.Err())
	}
	computeStart := time.Now()
	proof, timings, err := b.worker.Prove(ctx, k.fd, k.file.HeaderDigest(), req.Partition)
	<-b.cpu
	switch {
	case ctx.Err() != nil:
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove: %v", ctx.Err())
	case err != nil:
		return sdk.ProveResult{}, err
	}
	phases := timings.Phases(computeStart.Sub(start))
	var busy time.Duration
	for _, p := range phases {
		busy += p.DeviceBusy
	}
	return sdk.ProveResult{Proof: proof, Wall: time.Since(start), DeviceBusy: busy, Phases: phases}, nil
}
