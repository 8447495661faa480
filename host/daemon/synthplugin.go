package daemon

// Synthesis by a synthesizer plugin ([[circuit]] synthesizer): the second
// synthesis source beside the built-in gnark solver (pipeline.go's synthesize
// picks one per circuit). The daemon keeps what it keeps for the built-in
// solver: the partition's memory is reserved before the plugin is asked, the
// partition takes its place in the order, and every proof is verified. What
// the plugin writes is not trusted: the host makes the memfd (its size sealed),
// seals it against writes once the plugin answers (refused while the plugin
// still maps it writable), and checks the public inputs in W against the
// submitted witness; a proof that does not verify makes the host
// check the partition against every constraint (sdk/partcheck, on the
// circuit's curve, BLS12-381 or BN254, as every step here), so a plugin
// that lies fails the job with an error that says so, and a device that failed
// is retried as before.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/journal"
	"github.com/zkhost/zkhost/host/queue"
	"github.com/zkhost/zkhost/host/synth"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	zkcurve "github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/partcheck"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/shm"
)

// startSynthesizers starts the synthesizer plugin of every [[circuit]] that
// names one, after its circuit is loaded. Errors name the circuit's entry.
func (d *Daemon) startSynthesizers(ctx context.Context) error {
	for i, cc := range d.cfg.Circuits {
		if cc.Synthesizer == "" {
			continue
		}
		ce := d.circuits[cc.Name]
		if ce == nil {
			continue
		}
		ref, err := circuitRef(ce.c)
		if err != nil {
			return fmt.Errorf("circuit[%d] %q: synthesizer: %w", i, cc.Name, err)
		}
		name := "synth." + cc.Name
		lc := plugins.LaunchConfig{Path: cc.Synthesizer, SHA256: cc.SynthesizerSHA256, Logger: d.log.Named(name).With("circuit", cc.Name), SocketDir: d.socketDir}
		lc.Env = append(lc.Env, sdk.LogLevelEnv+"="+d.cfg.LogLevel)
		s, err := synth.Start(ctx, synth.Options{
			Name:    name,
			Launch:  lc,
			Circuit: ref,
			Policy:  d.pluginPolicy(),
			Logger:  d.log.Named(name),
		})
		if err != nil {
			return fmt.Errorf("circuit[%d] %q: %w", i, cc.Name, err)
		}
		ce.synth, ce.synthPath, ce.synthTimeout = s, cc.Synthesizer, cc.SynthesizerTimeout
		d.log.Info("circuit synthesized by a plugin", "circuit", cc.Name, "synthesizer", cc.Synthesizer, "timeout", d.synthDeadline(ce))
	}
	return nil
}

// circuitRef describes loaded circuit c to a synthesizer: its constraint
// system file (hashed here), curve and sizes.
func circuitRef(c *circuit.Circuit) (sdk.CircuitRef, error) {
	ccsPath, _, _, _ := circuit.Paths(c.KeyDir, c.Name)
	f, err := os.Open(ccsPath)
	if err != nil {
		return sdk.CircuitRef{}, fmt.Errorf("constraint system: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sdk.CircuitRef{}, fmt.Errorf("constraint system %s: %w", ccsPath, err)
	}
	ref := sdk.CircuitRef{
		ID: c.Name, Curve: c.Curve, CCSPath: ccsPath,
		NbWires: uint64(c.NbWires), NbConstraints: uint64(c.NbConstraints),
		NbPublic: uint64(c.NbPublic), NbSecret: uint64(c.NbSecret),
	}
	copy(ref.CCSSHA256[:], h.Sum(nil))
	return ref, nil
}

// synthDeadline bounds one Synthesize call: [[circuit]] synthesizer_timeout, or
// one minute plus 20 µs per constraint, about 100 times what gnark's solver
// takes on the chain circuit on the 2-core dev machine (BENCHMARKS.md, "CPU
// path: zkhost's CPU backend against gnark's groth16.Prove"): a synthesizer's
// own hints may be slow, and only one that hangs should meet it.
func (d *Daemon) synthDeadline(ce *circuitEntry) time.Duration {
	if ce.synthTimeout > 0 {
		return ce.synthTimeout
	}
	return time.Minute + time.Duration(ce.c.NbConstraints)*20*time.Microsecond
}

// synthesizeWithPlugin is synthesize's second half for a circuit with a
// synthesizer plugin: w is the parsed witness, the partition's memory is
// reserved. It asks the plugin for the partition, written into a memfd the host
// made, seals and checks it, and stages it; a plugin that crashes or hangs costs an attempt and is
// retried, one that refuses the witness or writes a wrong file fails the job.
func (d *Daemon) synthesizeWithPlugin(it queue.Item[*task], lane string, w witness.Witness, queued, start time.Time) {
	t := it.Value
	j, ce := t.job, t.job.circ
	var err error
	if t.public, t.publicBytes, err = publicPart(w); err != nil {
		d.failTask(t, err.Error())
		return
	}
	name := fmt.Sprintf("%s-%d-%d-s%d", j.id, t.idx, t.attempts, t.synthAttempts+1)
	out, err := d.shm.Output(name, ce.c.Curve, uint64(ce.c.NbWires), uint64(ce.c.NbConstraints))
	if err != nil && journal.IsNoSpace(err) {
		d.stagingNoSpace(it, err) // as for the built-in solver's partitions: no attempt spent
		return
	}
	if err != nil {
		d.failTask(t, fmt.Sprintf("shared memory: %v", err))
		return
	}
	t.synthAttempts++
	timeout := d.synthDeadline(ce)
	ctx, cancel := context.WithTimeout(j.ctx, timeout)
	_, err = ce.synth.Synthesize(ctx, t.witness, out)
	cancel()
	synthEnd := time.Now()
	if err != nil {
		d.removeOutput(out)
		if j.ctx.Err() != nil {
			d.releaseTask(t)
			return
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// A synthesizer that does not answer in time is treated as crashed.
			d.log.Error("synthesizer did not answer within its deadline; killing it", "synthesizer", ce.synthPath, "job", j.id, "partition", t.idx)
			ce.synth.KillHung(fmt.Sprintf("synthesizer did not answer within %s; killed", timeout))
			err = fmt.Errorf("did not answer within %s: %w", timeout, synth.ErrCrashed)
		}
		retryable := errors.Is(err, synth.ErrCrashed) ||
			(sdk.IsRetryable(err) && !errors.Is(err, synth.ErrUnhealthy) && !errors.Is(err, synth.ErrStopped))
		d.retrySynthesis(t, fmt.Sprintf("synthesis attempt %d by synthesizer %s: %v", t.synthAttempts, ce.synthPath, err), retryable)
		return
	}
	// Sealed first, checked after: the bytes checked are the bytes proved.
	h, err := d.shm.Adopt(out)
	if err == nil {
		err = d.checkPublic(h, t.public)
	}
	if err != nil {
		d.removeOutput(out)
		d.failTask(t, fmt.Sprintf("synthesizer %s wrote an unusable partition: %v", ce.synthPath, err))
		return
	}
	d.staged(it, lane, h, queued, start, synthEnd)
}

// checkPublic checks that the partition h carries the constant wire and the
// public inputs of pub (the submitted witness's public part) at the start of
// W. A partition for other public inputs would prove another statement; its
// proof would not verify against pub, and checking here names the cause. The
// witness, parsed over the circuit's field, holds that curve's scalars: they
// pick the type checkPublicOf reads W as.
func (d *Daemon) checkPublic(h sdk.PartitionHandle, pub witness.Witness) error {
	switch vec := pub.Vector().(type) {
	case blsfr.Vector:
		return checkPublicOf[blsfr.Element](d.shm, h, vec)
	case bnfr.Vector:
		return checkPublicOf[bnfr.Element](d.shm, h, vec)
	}
	return fmt.Errorf("public witness holds %T, want BLS12-381 or BN254 scalars", pub.Vector())
}

// checkPublicOf is checkPublic for a circuit whose scalars are S: a partition
// of another curve is refused naming both (shm.ReadWOf).
func checkPublicOf[S ~[4]uint64, PS zkcurve.Scalar[S]](store *shm.Store, h sdk.PartitionHandle, pub []S) error {
	W, err := shm.ReadWOf[S, PS](store, h, 1+len(pub))
	if err != nil {
		return err
	}
	return partcheck.Public[S, PS](W, pub)
}

// removeOutput removes the memfd out, adopted or not.
func (d *Daemon) removeOutput(out sdk.PartitionHandle) {
	if err := d.shm.Remove(out); err != nil {
		d.log.Warn("removing a synthesizer's partition", "path", out.Path, "error", err)
	}
}

// retrySynthesis records a failed synthesis attempt, then requeues the
// partition for synthesis (its memory and staging token given back meanwhile)
// or fails its job: after Retry.MaxAttempts attempts, or at once when the
// failure is not retryable (the synthesizer refused the witness, or is out of
// service after crashing too often).
func (d *Daemon) retrySynthesis(t *task, reason string, retryable bool) {
	j := t.job
	maxAttempts := max(1, d.cfg.Retry.MaxAttempts)
	if !retryable || t.synthAttempts >= maxAttempts {
		d.failTask(t, reason)
		return
	}
	t.reasons = append(t.reasons, reason)
	if _, err := d.journal.RecordAttempt(j.id, t.idx, reason); err != nil {
		d.log.Warn("recording attempt", "job", j.id, "partition", t.idx, "error", err)
	}
	d.releaseTask(t)
	d.log.Warn("partition synthesis failed; retrying", "job", j.id, "partition", t.idx, "reason", reason)
	d.metrics.Retry(j.class.String())
	d.transition(j, t.idx, api.JobEvent{Kind: api.EventPartitionRetried, Attempt: t.attempts, Reason: reason},
		func(p *api.Partition) { p.Error = reason })
	backoff := d.cfg.Retry.BackoffBase << min(t.synthAttempts-1, 10)
	if backoff > d.cfg.Retry.BackoffMax && d.cfg.Retry.BackoffMax > 0 {
		backoff = d.cfg.Retry.BackoffMax
	}
	item := queueItem(t)
	// Wait in a pipeline goroutine, as retryOrFail does, so Close waits for it.
	d.goRun(func() {
		select {
		case <-time.After(backoff):
		case <-j.ctx.Done():
			return
		}
		if err := d.synthQ.Requeue(item); err != nil {
			d.failTask(t, fmt.Sprintf("requeue: %v", err))
		}
	})
}

// checkPluginPartition runs when a proof made from t's partition did not
// verify. For a partition a synthesizer plugin wrote, it checks the partition
// against every constraint of the circuit and returns why it fails (the
// synthesizer lied), or "" when it satisfies the circuit (the device failed;
// the caller retries as for any bad proof). Built-in partitions return "".
func (d *Daemon) checkPluginPartition(t *task) string {
	ce := t.job.circ
	if ce.synth == nil || t.handle == nil {
		return ""
	}
	p, err := sdk.OpenPartition(*t.handle)
	if err != nil {
		return fmt.Sprintf("synthesizer %s: its partition file cannot be read back: %v", ce.synthPath, err)
	}
	defer p.Close()
	if err := partcheck.CheckPartition(ce.c.System, p); err != nil {
		d.log.Error("a synthesizer plugin wrote a partition that does not satisfy its circuit", "synthesizer", ce.synthPath,
			"job", t.job.id, "partition", t.idx, "error", err)
		return fmt.Sprintf("synthesizer %s wrote a partition that does not satisfy circuit %s (%v); its proof did not verify", ce.synthPath, ce.name, err)
	}
	return ""
}
