package daemon

import (
	"fmt"

	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/finalize"
	"github.com/zkhost/zkhost/host/journal"
)

// Proofs read back from the journal are served only when they are known good:
// the journal checks each against the checksum stored with it, and a proof
// stored before the journal kept checksums is verified with gnark again, as
// the finalizer verified it before it was stored. A proof that fails either
// check fails its job with the reason; the journal's other jobs are untouched.

// storedProofs returns done job id's proofs, each checked.
func (d *Daemon) storedProofs(id, circuitName string) ([]journal.Proof, error) {
	proofs, err := d.journal.Proofs(id)
	if err != nil {
		return nil, err
	}
	for _, p := range proofs {
		if p.Checked {
			continue
		}
		ce, ok := d.circuits[circuitName]
		if !ok {
			return nil, fmt.Errorf("the proof of partition %d was stored before the journal kept checksums, and only circuit %q's key can verify it, which this daemon does not serve", p.Index, circuitName)
		}
		if err := verifyStored(ce, p); err != nil {
			return nil, fmt.Errorf("journal: job %s: %w: the proof of partition %d, stored before the journal kept checksums, %v", id, journal.ErrDamaged, p.Index, err)
		}
	}
	return proofs, nil
}

// verifyStored verifies a proof read back from the journal with gnark.
func verifyStored(ce *circuitEntry, p journal.Proof) error {
	pub, err := witness.New(ce.c.VK.CurveID().ScalarField())
	if err != nil {
		return err
	}
	if err := pub.UnmarshalBinary(p.Public); err != nil {
		return fmt.Errorf("has a public witness that does not decode: %v", err)
	}
	if _, err := finalize.Verify(ce.c.VK, p.Proof, pub); err != nil {
		return fmt.Errorf("does not verify: %v", err)
	}
	return nil
}

// recordDamaged logs and journals job id as failed for reason, a damaged
// record of it.
func (d *Daemon) recordDamaged(id, reason string) {
	d.log.Error("a record of the job is damaged in the journal; the job is failed", "job", id, "reason", reason)
	if err := d.journal.FailDamaged(id, reason); err != nil {
		d.log.Error("recording the damaged job as failed", "job", id, "error", err)
	}
}

// failDamaged fails the job out shows, whose journal record damage says is
// damaged: in the journal, in memory when it is live, and in out, whose
// proofs are dropped.
func (d *Daemon) failDamaged(out *api.Job, damage error) {
	reason := damage.Error()
	d.recordDamaged(out.ID, reason)
	d.mu.Lock()
	if j, ok := d.jobs[out.ID]; ok {
		j.state, j.err = api.JobFailed, reason
	}
	d.mu.Unlock()
	out.State, out.Error = api.JobFailed, reason
	for i := range out.Partitions {
		out.Partitions[i].Proof, out.Partitions[i].PublicWitness = nil, nil
	}
}
