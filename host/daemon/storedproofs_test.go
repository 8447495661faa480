package daemon

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/zkhost/zkhost/host/api"
)

// flipInFile flips one byte in the middle of every copy of b in the file at
// path (bbolt may keep older copies of a page in free pages), as a disk would.
func flipInFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for off := 0; ; {
		i := bytes.Index(data[off:], b)
		if i < 0 {
			break
		}
		at := int64(off + i + len(b)/2)
		// Written through the file, not the whole file rewritten: a running
		// daemon's mapping of it sees the change.
		if _, err := f.WriteAt([]byte{data[at] ^ 0x10}, at); err != nil {
			t.Fatal(err)
		}
		off += i + len(b)
		n++
	}
	if n == 0 {
		t.Fatal("the bytes are not in the journal")
	}
}

// twoProvedJobs starts a daemon and proves two jobs of two partitions of the
// small circuit, their witnesses of seeds seed and seed+1: a and b, ended.
func twoProvedJobs(t *testing.T, ctx context.Context, seed uint64) (f *fixture, a, b api.Job, wa, wb [][]byte) {
	f = start(t, opts{})
	wa, wb = witnesses(t, small, 2, seed), witnesses(t, small, 2, seed+1)
	a = f.await(ctx, f.submit(ctx, small, api.ClassNormal, wa).ID)
	b = f.await(ctx, f.submit(ctx, small, api.ClassNormal, wb).ID)
	return f, a, b, wa, wb
}

// TestStoredProofDamagedWhileServing: a proof damaged on the disk after it was
// stored, under a running daemon, is not served: its job is failed with the
// reason, and the other job is served as before.
func TestStoredProofDamagedWhileServing(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	f, a, b, wa, wb := twoProvedJobs(t, ctx, 21)
	verifyProofs(t, small, a, wa)

	flipInFile(t, f.cfg.Journal.Path, a.Partitions[1].Proof)
	got, err := f.c.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != api.JobFailed || !strings.Contains(got.Error, "damaged record: the proof of partition 1 does not match its checksum") {
		t.Errorf("job with a damaged proof: %s (%q), want failed naming the proof", got.State, got.Error)
	}
	for _, p := range got.Partitions {
		if p.Proof != nil {
			t.Errorf("partition %d of the damaged job served a proof", p.Index)
		}
	}
	// Failed for good: the journal says so too.
	list, err := f.c.List(ctx, api.ListFilter{State: api.JobFailed})
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Errorf("failed jobs listed: %v, %v; want the damaged one", list, err)
	}
	back, err := f.c.Get(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	verifyProofs(t, small, back, wb)
}

// TestLegacyProofsVerifiedBeforeServed: a journal written before checksums
// existed (format 1) opens; its proofs are verified with gnark before they are
// served, and a job whose stored proof does not verify is failed with the
// reason, the others served.
func TestLegacyProofsVerifiedBeforeServed(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	f, a, b, wa, _ := twoProvedJobs(t, ctx, 31)
	f.shutdown()

	// The journal as a zkhost before checksums wrote it, and then a byte of
	// one of job b's proofs flipped.
	db, err := bolt.Open(f.cfg.Journal.Path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("meta")).Put([]byte("version"), []byte("1")); err != nil {
			return err
		}
		for _, id := range []string{a.ID, b.ID} {
			jb := tx.Bucket([]byte("jobs")).Bucket([]byte(id))
			if err := jb.Delete([]byte("job.sum")); err != nil {
				return err
			}
			for _, name := range []string{"parts.sum", "witness.sum", "proof.sum", "public.sum"} {
				if err := jb.DeleteBucket([]byte(name)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
					return err
				}
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	flipInFile(t, f.cfg.Journal.Path, b.Partitions[0].Proof)

	f2 := start(t, opts{stateDir: f.stateDir})
	got, err := f2.c.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	verifyProofs(t, small, got, wa)
	got, err = f2.c.Get(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != api.JobFailed || !strings.Contains(got.Error, "the proof of partition 0, stored before the journal kept checksums, does not verify") {
		t.Errorf("job with a damaged proof stored before checksums: %s (%q), want failed naming the proof", got.State, got.Error)
	}
}
