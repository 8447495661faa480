package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
)

// backend is the CPU backend with faults injected around its calls.
type backend struct {
	inner sdk.Backend
	opts  options
	log   hclog.Logger

	mu  sync.Mutex
	rng *rand.Rand
}

func newBackend(inner sdk.Backend, opts options, run uint64, log hclog.Logger) *backend {
	return &backend{
		inner: inner,
		opts:  opts,
		log:   log,
		rng:   rand.New(rand.NewPCG(opts.seed, run)),
	}
}

var _ sdk.Backend = (*backend)(nil)

// chance draws one random choice: true with probability p. Choices are drawn in
// call order from the seeded stream, so a run with one proof in flight at a time
// is reproducible.
func (b *backend) chance(p float64) bool {
	if p <= 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rng.Float64() < p
}

// at injects the crash or hang configured for phase, if it fires.
func (b *backend) at(phase string) {
	if b.opts.hangPhase == phase && b.chance(b.opts.hangP) {
		b.log.Warn("fault: hanging; this call will never answer", "phase", phase)
		select {} // never answer, whatever the caller's context says
	}
	if b.opts.crashPhase == phase && b.chance(b.opts.crashP) {
		b.crash(phase)
	}
}

// crash ends the process the configured way.
func (b *backend) crash(phase string) {
	b.log.Warn("fault: crashing", "phase", phase, "how", b.opts.crashHow)
	switch b.opts.crashHow {
	case "exit":
		os.Exit(70)
	case "panic":
		panic("faultbackend: injected crash in phase " + phase)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not delivered synchronously; wait for it
}

func (b *backend) Describe(ctx context.Context) (sdk.Description, error) {
	b.at(phaseDescribe)
	d, err := b.inner.Describe(ctx)
	if err != nil {
		return d, err
	}
	d.Name = "faultbackend"
	d.Version = "0.1.0"
	d.Device.Kind = b.opts.kind
	d.Device.Model = "fault-injecting " + d.Device.Model
	if b.opts.apiVersion != 0 {
		d.APIVersions = []uint32{uint32(b.opts.apiVersion)}
	}
	if b.opts.maxInFlightClaim >= 0 {
		d.MaxInFlight = b.opts.maxInFlightClaim
	}
	if b.opts.claimCurves {
		d.Curves = b.opts.curves
	}
	return d, nil
}

func (b *backend) LoadKey(ctx context.Context, key sdk.KeyRef) (sdk.KeyInfo, error) {
	b.at(phaseLoadKey)
	return b.inner.LoadKey(ctx, key)
}

func (b *backend) UnloadKey(ctx context.Context, keyID string) error {
	return b.inner.UnloadKey(ctx, keyID)
}

func (b *backend) Prove(ctx context.Context, req sdk.ProveRequest) (sdk.ProveResult, error) {
	b.at(phaseProveStart)
	if b.opts.slow > 0 {
		select {
		case <-time.After(b.opts.slow):
		case <-ctx.Done():
			return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove (slow fault): %v", ctx.Err())
		}
	}
	var res sdk.ProveResult
	var err error
	if b.opts.crashPhase == phaseProveMid || b.opts.hangPhase == phaseProveMid {
		// Let the proof start, then fail while it computes (or as it ends, if
		// it is quicker than the delay).
		done := make(chan struct{})
		go func() {
			defer close(done)
			res, err = b.inner.Prove(ctx, req)
		}()
		select {
		case <-time.After(b.opts.midDelay):
		case <-done:
		}
		b.at(phaseProveMid)
		<-done
	} else {
		res, err = b.inner.Prove(ctx, req)
	}
	if err != nil {
		return res, err
	}
	b.at(phaseAfterProof)
	if b.chance(b.opts.invalidP) {
		b.log.Warn("fault: answering an invalid proof", "how", b.opts.invalidHow)
		res.Proof = b.spoil(res.Proof)
	}
	return res, nil
}

// spoil returns an invalid proof: the same proof with its A point negated (well
// formed, on the curve, but it does not verify), or random bytes.
func (b *backend) spoil(proof []byte) []byte {
	if b.opts.invalidHow == "negate" {
		p := groth16.NewProof(ecc.BLS12_381)
		if _, err := p.ReadFrom(bytes.NewReader(proof)); err == nil {
			if bp, ok := p.(*groth16_bls12381.Proof); ok {
				bp.Ar.Neg(&bp.Ar)
				var buf bytes.Buffer
				if _, err := bp.WriteTo(&buf); err == nil {
					return buf.Bytes()
				}
			}
		}
		b.log.Warn("fault: could not decode the proof to negate it; answering garbage instead")
	}
	out := make([]byte, len(proof))
	b.mu.Lock()
	for i := range out {
		out[i] = byte(b.rng.Uint32())
	}
	b.mu.Unlock()
	return out
}
