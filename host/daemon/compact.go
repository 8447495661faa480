package daemon

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/budget"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/shm"
)

// compactW is what a circuit proved from compact partitions needs (W alone,
// packed: sdk.FormatCompactW): its constraint matrices in a sealed memfd,
// sent with every load of its key so the backend evaluates A and B itself,
// and the solver's W vectors, reused from one partition to the next. A real
// witness is mostly 0s and 1s, so the partition shrinks from 96 bytes a
// constraint to a few bits, and so do the host's writes, the backend's reads
// and the upload.
type compactW struct {
	file *shm.Constraints
	resv *budget.Reservation // the file's memory, for the daemon's life
	// wPool holds *[]S of the circuit's NbWires, S its curve's scalar
	// (newCompactW picks it; writeCompactAs takes it back out).
	wPool sync.Pool
	// refused is set once a device loaded the key without taking the
	// constraints (device.ErrCompactRefused): the circuit's partitions are
	// synthesized in full from then on.
	refused atomic.Bool
}

// compactFor decides whether ce's partitions are compact, and if so gives ce
// the circuit's constraints (shared by every entry of the same circuit) and
// puts them in ce.key. Compact needs a gnark circuit of either curve (its
// System: a circom circuit has no solver here, and its assignments need
// none), the built-in solver (a synthesizer plugin writes full partitions)
// and every device's backend to prove compact partitions: a partition may go
// to any device. Anything that stops it (a system the matrices cannot hold,
// a budget too small for them) leaves the circuit on full partitions, logged.
func (d *Daemon) compactFor(ce *circuitEntry) {
	if ce.synth != nil || len(d.devices) == 0 || ce.c.System == nil {
		return
	}
	for _, de := range d.devices {
		if !de.dev.Description().CompactW {
			return
		}
	}
	if d.compact == nil {
		d.compact = map[*circuit.Circuit]*compactW{}
	}
	cw, ok := d.compact[ce.c]
	if !ok {
		var err error
		cw, err = d.newCompactW(ce.c)
		d.compact[ce.c] = cw // nil after an error: not tried again
		if err != nil {
			d.log.Warn("circuit proved from full partitions: its constraints cannot be sent to the devices", "circuit", ce.name, "error", err)
			return
		}
		d.log.Info("circuit proved from compact partitions", "circuit", ce.name,
			"constraints_bytes", cw.file.Size())
	}
	if cw == nil {
		return
	}
	ce.cw = cw
	h := cw.file.Handle()
	ce.key.Constraints = &h
}

// newCompactW builds c's matrices, writes them into a sealed memfd and
// reserves its memory from the critical budget, as a key's is.
func (d *Daemon) newCompactW(c *circuit.Circuit) (*compactW, error) {
	m, err := keyconv.Constraints(c.System)
	if err != nil {
		return nil, err
	}
	f, err := d.shm.WriteConstraints(c.Name+"-constraints", m)
	if err != nil {
		return nil, err
	}
	r, err := d.budget.TryReserve(api.ClassCritical, f.Size(), "constraints "+c.Name)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("its constraints (%s) do not fit the memory budget: %w", budget.FormatBytes(f.Size()), err)
	}
	cw := &compactW{file: f, resv: r}
	if c.Curve == sdk.CurveBN254 {
		cw.wPool.New = newW[bnfr.Element](c.NbWires)
	} else {
		cw.wPool.New = newW[fr.Element](c.NbWires)
	}
	return cw, nil
}

// newW is a pool's New for W vectors of n scalars S.
func newW[S any](n int) func() any {
	return func() any { w := make([]S, n); return &w }
}

// closeCompact releases every circuit's constraints.
func (d *Daemon) closeCompact() {
	for _, cw := range d.compact {
		if cw != nil {
			cw.file.Close()
			cw.resv.ReleaseAll()
		}
	}
	d.compact = nil
}

// compactShmBytes is the most a compact partition of ce can take: every wire
// neither 0 nor 1.
func compactShmBytes(ce *circuitEntry) uint64 {
	_, _, _, size := sdk.CompactLayout(uint64(ce.c.NbWires), uint64(ce.c.NbWires))
	return size
}

// writeCompact solves t's input into a pooled W (A and B are not needed: the
// backend evaluates them) and packs it into a compact partition, over the
// circuit's curve; a compact wire assignment, packed already, goes in as it
// came (writePacked). It returns the solver's error (the input's fault)
// apart from the store's.
func (d *Daemon) writeCompact(t *task, name string, threads int) (h sdk.PartitionHandle, synthErr, err error) {
	if t.job.circ.c.Curve == sdk.CurveBN254 {
		return writeCompactAs[bnfr.Element](d, t, name, threads)
	}
	return writeCompactAs[fr.Element](d, t, name, threads)
}

// writeCompactAs is writeCompact on the scalars S of the circuit's curve.
func writeCompactAs[S ~[4]uint64, PS curve.Scalar[S]](d *Daemon, t *task, name string, threads int) (h sdk.PartitionHandle, synthErr, err error) {
	if circuit.IsCompactAssignment(t.witness) {
		return writePacked[S, PS](d, t, name, threads)
	}
	ce := t.job.circ
	wp := ce.cw.wPool.Get().(*[]S)
	defer ce.cw.wPool.Put(wp)
	words := sdk.CompactWords(uint64(ce.c.NbWires))
	other, bits := make([]uint64, words), make([]uint64, words)
	w, nbOther, synthErr := circuit.SynthesizeInputCompact(ce.c, t.witness, threads, *wp, other, bits)
	if synthErr == nil {
		t.public, t.publicBytes, synthErr = publicPart(w)
	}
	if synthErr != nil {
		return sdk.PartitionHandle{}, synthErr, nil
	}
	h, err = shm.WriteCompactBits(d.shm, name, uint64(ce.c.NbWires), uint64(ce.c.NbConstraints), other, bits, nbOther,
		func(values []S) error { return sdk.GatherOther(*wp, other, values, threads) })
	return h, nil, err
}

// writePacked writes a compact wire assignment (what a cluster's synthesis
// host ships) into a compact partition without unpacking W: its bitmaps are
// copied and its values, scalars S of the circuit's curve, decoded straight
// into the memfd; only the inputs are decoded apart, for the public witness.
func writePacked[S ~[4]uint64, PS curve.Scalar[S]](d *Daemon, t *task, name string, threads int) (h sdk.PartitionHandle, synthErr, err error) {
	c := t.job.circ.c
	a, synthErr := circuit.ReadCompactAssignment[S, PS](t.witness, c)
	if synthErr == nil {
		var full witness.Witness
		if full, synthErr = a.Witness(c); synthErr == nil {
			t.public, t.publicBytes, synthErr = publicPart(full)
		}
	}
	if synthErr != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("wire assignment %w", synthErr), nil
	}
	var valuesErr error
	h, err = shm.WriteCompactBits(d.shm, name, uint64(c.NbWires), uint64(c.NbConstraints), a.Other, a.Bits, a.NbOther,
		func(values []S) error { valuesErr = a.Values(values, threads); return valuesErr })
	if valuesErr != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("wire assignment %w", valuesErr), nil
	}
	return h, nil, err
}

// compactRefused handles a device's refusal of a compact partition: the
// circuit goes back to full partitions for good, and this partition is
// synthesized again, costing no attempt.
func (d *Daemon) compactRefused(t *task, why error) {
	j, ce := t.job, t.job.circ
	if ce.cw != nil && !ce.cw.refused.Swap(true) {
		d.log.Warn("a device did not take the circuit's constraints; its partitions are synthesized in full from now on", "circuit", ce.name, "device", t.device, "error", why)
	}
	t.attempts--
	d.releaseTask(t)
	d.transition(j, t.idx, api.JobEvent{Kind: api.EventPartitionQueued, Attempt: t.attempts, Device: t.device, Reason: why.Error()}, func(p *api.Partition) {
		p.Attempts = t.attempts
		p.Device = ""
	})
	if err := d.synthQ.Requeue(queueItem(t)); err != nil {
		d.failTask(t, fmt.Sprintf("requeue: %v", errors.Join(why, err)))
	}
}
