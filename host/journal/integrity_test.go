package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/zkhost/zkhost/host/api"
)

// damageFixture makes a journal with two done jobs ("a", "b"), an unfinished
// one ("c", partition 0 proved) and a failed one ("f"), and closes it.
func damageFixture(t *testing.T) string {
	t.Helper()
	j, path := openTemp(t)
	for _, id := range []string{"a", "b"} {
		newJob(t, j, id, "", 2)
		for i := range 2 {
			if _, err := j.MarkPartitionDone(id, i, []byte("proof "+id+fmt.Sprint(i)), []byte("public "+id+fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.SetJobState(id, api.JobDone, ""); err != nil {
			t.Fatal(err)
		}
	}
	newJob(t, j, "c", "", 3)
	if _, err := j.MarkPartitionDone("c", 0, []byte("proof c0"), []byte("public c0")); err != nil {
		t.Fatal(err)
	}
	newJob(t, j, "f", "", 1)
	if err := j.SetJobState("f", api.JobFailed, "a bad witness"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// flipValue flips the last byte of a stored value, leaving its checksum: what
// a bit flipped on the disk inside the value looks like to the journal.
func flipValue(t *testing.T, path, job string, name []byte, idx int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		jb := tx.Bucket(bucketJobs).Bucket([]byte(job))
		b, key := jb, keyJob
		if name != nil {
			b, key = jb.Bucket(name), u32(idx)
		}
		v := bytes.Clone(b.Get(key))
		if v == nil {
			return fmt.Errorf("job %s has no %s %d", job, name, idx)
		}
		v[len(v)-1] ^= 0x01
		return b.Put(key, v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDamagedRecordFailsItsJob flips one byte inside each kind of record: the
// job it belongs to is failed at the next Open with a reason naming the record,
// and every other job reads back as it was.
func TestDamagedRecordFailsItsJob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		job    string
		bucket []byte // nil: the job record
		idx    int
		reason string
	}{
		{"proof of a done job", "b", keyProof, 1, "job b: damaged record: the proof of partition 1 does not match its checksum"},
		{"public witness of a done job", "a", keyPublic, 0, "job a: damaged record: the public witness of partition 0 does not match its checksum"},
		{"proof of an unfinished job", "c", keyProof, 0, "job c: damaged record: the proof of partition 0 does not match its checksum"},
		{"witness of an unfinished job", "c", keyWitness, 2, "job c: damaged record: the witness of partition 2 does not match its checksum"},
		{"partition record", "a", keyParts, 1, "job a: damaged record: the record of partition 1 does not match its checksum"},
		{"job record", "c", nil, 0, "job c: damaged record: the job record does not match its checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := damageFixture(t)
			flipValue(t, path, tc.job, tc.bucket, tc.idx)
			j, err := Open(path)
			if err != nil {
				t.Fatalf("Open refused a journal with one damaged record: %v", err)
			}
			defer j.Close()
			rep := j.Repaired()
			if len(rep) != 1 || rep[0].JobID != tc.job || !strings.Contains(rep[0].Reason, tc.reason) {
				t.Fatalf("Repaired = %+v, want job %s with %q", rep, tc.job, tc.reason)
			}
			got, err := j.GetJob(tc.job)
			if err != nil || got.State != api.JobFailed || got.Error != rep[0].Reason {
				t.Errorf("damaged job %s: state %v error %q (%v), want failed with %q", tc.job, got.State, got.Error, err, rep[0].Reason)
			}
			if _, err := j.Partitions(tc.job); err != nil {
				t.Errorf("Partitions of the failed job: %v", err)
			}
			checkUntouched(t, j, tc.job)

			// Failed once: the next Open finds nothing more to repair.
			j.Close()
			j2, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer j2.Close()
			if rep := j2.Repaired(); len(rep) != 0 {
				t.Errorf("second Open repaired %+v again", rep)
			}
			if got, err := j2.GetJob(tc.job); err != nil || got.State != api.JobFailed {
				t.Errorf("after a second Open job %s is %v (%v), want failed", tc.job, got.State, err)
			}
		})
	}
}

// checkUntouched checks the fixture's jobs other than damaged read back whole.
func checkUntouched(t *testing.T, j *Journal, damaged string) {
	t.Helper()
	want := map[string]api.JobState{"a": api.JobDone, "b": api.JobDone, "c": api.JobQueued, "f": api.JobFailed}
	list, err := j.ListJobs(Filter{})
	if err != nil || len(list) != len(want) {
		t.Fatalf("ListJobs = %d jobs, %v; want %d", len(list), err, len(want))
	}
	for id, state := range want {
		if id == damaged {
			continue
		}
		got, err := j.GetJob(id)
		if err != nil || got.State != state {
			t.Errorf("job %s: %v (%v), want %v", id, got.State, err, state)
		}
		switch state {
		case api.JobDone:
			proofs, err := j.Proofs(id)
			if err != nil || len(proofs) != 2 {
				t.Fatalf("Proofs(%s) = %d, %v", id, len(proofs), err)
			}
			for i, p := range proofs {
				if string(p.Proof) != "proof "+id+fmt.Sprint(i) || string(p.Public) != "public "+id+fmt.Sprint(i) || !p.Checked {
					t.Errorf("Proofs(%s)[%d] = %q %q checked=%v", id, i, p.Proof, p.Public, p.Checked)
				}
			}
		case api.JobQueued:
			if w, err := j.Witness(id, 2); err != nil || !bytes.Equal(w, witnesses(id, 3)[2]) {
				t.Errorf("Witness(%s, 2) = %q, %v", id, w, err)
			}
		}
	}
}

// TestDamageFoundAfterOpen: a record damaged while the journal is open is
// refused on read (ErrDamaged, naming it), and FailDamaged fails its job, done
// or not.
func TestDamageFoundAfterOpen(t *testing.T) {
	path := damageFixture(t)
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).Bucket([]byte("a")).Bucket(keyProof).Put(u32(1), []byte("proof a1 flipped"))
	}); err != nil {
		t.Fatal(err)
	}
	_, err = j.Proofs("a")
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "job a: damaged record: the proof of partition 1") {
		t.Fatalf("Proofs of a damaged proof: %v, want ErrDamaged naming it", err)
	}
	if err := j.FailDamaged("a", err.Error()); err != nil {
		t.Fatal(err)
	}
	if got, err := j.GetJob("a"); err != nil || got.State != api.JobFailed || got.Finished.IsZero() {
		t.Errorf("after FailDamaged job a is %v finished %v (%v), want failed", got.State, got.Finished, err)
	}
	if err := j.FailDamaged("nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("FailDamaged of a missing job: %v, want ErrNotFound", err)
	}
	checkUntouched(t, j, "a")
}

// TestDamagedBytesInTheFile flips a byte of each stored proof in the file
// itself, as a disk would: their jobs fail, and nothing else.
func TestDamagedBytesInTheFile(t *testing.T) {
	path := damageFixture(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range []string{"proof b0", "proof b1"} {
		// bbolt may keep older copies of a page in free pages: flip them all.
		for off := 0; ; {
			i := bytes.Index(data[off:], []byte(p))
			if i < 0 {
				break
			}
			data[off+i+len(p)-1] ^= 0x40
			off += i + len(p)
			n++
		}
	}
	if n == 0 {
		t.Fatal("the proofs are not in the file")
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if rep := j.Repaired(); len(rep) != 1 || rep[0].JobID != "b" || !strings.Contains(rep[0].Reason, "proof of partition 0 does not match its checksum") {
		t.Errorf("Repaired = %+v, want job b, its proof of partition 0", rep)
	}
	checkUntouched(t, j, "b")
}

// TestDamagedFileRefused: a journal file that is empty, cut short or has a
// damaged page is refused by Open with an error naming the file and the way
// out, never a panic, never a new empty journal.
func TestDamagedFileRefused(t *testing.T) {
	// A journal large enough to be cut: a few hundred kB of witnesses.
	j, path := openTemp(t)
	for i := range 8 {
		ws := make([][]byte, 4)
		for k := range ws {
			ws[k] = bytes.Repeat([]byte{byte(i), byte(k)}, 8<<10)
		}
		if _, _, err := j.CreateJob(Job{ID: fmt.Sprint("big", i), ContentDigest: digest(ws), Circuit: "merkle"}, ws); err != nil {
			t.Fatal(err)
		}
	}
	var used int
	if err := j.db.View(func(tx *bolt.Tx) error { used = int(tx.Size()); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if used < 200_000 {
		t.Fatalf("the journal uses %d bytes, too few to be cut to 100 kB", used)
	}
	page := os.Getpagesize()
	for _, tc := range []struct {
		name string
		data func() []byte
		want string
	}{
		{"empty", func() []byte { return nil }, "it is empty (0 bytes)"},
		{"cut to 100 kB", func() []byte { return orig[:100_000] }, "journal file is damaged"},
		{"cut to half its pages", func() []byte { return orig[:used/2] }, "journal file is damaged"},
		{"cut to four pages", func() []byte { return orig[:4*page] }, "journal file is damaged"},
		{"garbage after the meta pages", func() []byte {
			b := bytes.Clone(orig)
			for i := 2 * page; i < len(b); i++ {
				b[i] = 0xff
			}
			return b
		}, "journal file is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A file of its own: one bbolt panicked on stays mapped, and locked.
			path := filepath.Join(t.TempDir(), "journal.db")
			if err := os.WriteFile(path, tc.data(), 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := Open(path)
			if err == nil {
				j.Close()
				t.Fatalf("Open accepted a journal %s", tc.name)
			}
			if !errors.Is(err, ErrDamagedFile) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "move it aside (mv journal.db journal.db.damaged)") {
				t.Errorf("Open of a journal %s: %v\nwant ErrDamagedFile naming %s, saying %q and the way out", tc.name, err, path, tc.want)
			}
		})
	}
	// Cut at every page its last transaction wrote: never opened. (bbolt
	// grows the file in steps, so the pages past those hold nothing.)
	for cut := 2 * page; cut < used; cut += page {
		path := filepath.Join(t.TempDir(), "journal.db")
		if err := os.WriteFile(path, orig[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := Open(path)
		if err == nil {
			j.Close()
			t.Errorf("Open accepted the journal cut to %d of %d bytes", cut, len(orig))
		} else if !errors.Is(err, ErrDamagedFile) && !strings.Contains(err.Error(), "the file is damaged; "+Recovery) {
			t.Errorf("Open of the journal cut to %d bytes: %v", cut, err)
		}
	}

	// The way out: moved aside, a new journal starts empty.
	if err := os.WriteFile(path, orig[:4*page], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrDamagedFile) {
		t.Fatalf("Open of a journal cut short: %v", err)
	}
	if err := os.Rename(path, path+".damaged"); err != nil {
		t.Fatal(err)
	}
	j, err = Open(path)
	if err != nil {
		t.Fatalf("Open after moving the damaged journal aside: %v", err)
	}
	defer j.Close()
	if list, err := j.ListJobs(Filter{}); err != nil || len(list) != 0 {
		t.Errorf("the new journal lists %d jobs, %v", len(list), err)
	}
}

// TestNewJournalIsNeverEmpty: Open lays a new journal out before it takes the
// journal's name, and leaves no temporary file.
func TestNewJournalIsNeverEmpty(t *testing.T) {
	j, path := openTemp(t)
	j.Close()
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		t.Fatalf("new journal: %v, %v", fi, err)
	}
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if err != nil || len(left) != 1 {
		t.Errorf("the state directory holds %v, want the journal alone", left)
	}
}

// TestLegacyJournal: a journal written before checksums (format 1: no sums)
// opens, reads as before with its proofs marked unchecked, becomes format 2,
// and what is written to it from then on is checked.
func TestLegacyJournal(t *testing.T) {
	path := damageFixture(t)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keyVersion, []byte(legacyFormat)); err != nil {
			return err
		}
		return tx.Bucket(bucketJobs).ForEach(func(id, _ []byte) error {
			jb := tx.Bucket(bucketJobs).Bucket(id)
			if err := jb.Delete(keyJobSum); err != nil {
				return err
			}
			for _, name := range [][]byte{keyParts, keyWitness, keyProof, keyPublic} {
				if err := jb.DeleteBucket(sumsName(name)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
					return fmt.Errorf("job %s: %s: %w", id, sumsName(name), err)
				}
			}
			return nil
		})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	j, err := Open(path)
	if err != nil {
		t.Fatalf("Open of a format 1 journal: %v", err)
	}
	defer j.Close()
	if rep := j.Repaired(); len(rep) != 0 {
		t.Errorf("a format 1 journal repaired: %+v", rep)
	}
	if err := j.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyVersion); string(v) != formatVersion {
			return fmt.Errorf("format %q after Open, want %s", v, formatVersion)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	proofs, err := j.Proofs("a")
	if err != nil || len(proofs) != 2 || proofs[0].Checked || string(proofs[1].Proof) != "proof a1" {
		t.Errorf("Proofs of a format 1 job = %+v, %v; want both, unchecked", proofs, err)
	}
	// New writes to a format 1 job carry checksums.
	if _, err := j.MarkPartitionDone("c", 1, []byte("proof c1"), []byte("public c1")); err != nil {
		t.Fatal(err)
	}
	if err := j.db.View(func(tx *bolt.Tx) error {
		jb := tx.Bucket(bucketJobs).Bucket([]byte("c"))
		for _, name := range [][]byte{keyProof, keyPublic, keyParts} {
			if _, checked, err := getChecked(jb, "c", name, 1); err != nil || !checked {
				return fmt.Errorf("%s 1 of job c written after the upgrade: checked=%v, %v", name, checked, err)
			}
		}
		if _, checked, _ := getChecked(jb, "c", keyProof, 0); checked {
			return errors.New("proof 0 of job c, written before the upgrade, reads as checked")
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// TestDamagedJobLostABucket: a job whose partition records are gone altogether
// is failed like any other damaged job, and the others are untouched.
func TestDamagedJobLostABucket(t *testing.T) {
	path := damageFixture(t)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).Bucket([]byte("c")).DeleteBucket(keyParts)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	j, err := Open(path)
	if err != nil {
		t.Fatalf("Open refused a journal with one damaged job: %v", err)
	}
	defer j.Close()
	if rep := j.Repaired(); len(rep) != 1 || rep[0].JobID != "c" || !strings.Contains(rep[0].Reason, "job c: damaged record: its parts bucket is missing") {
		t.Errorf("Repaired = %+v, want job c, its parts bucket", rep)
	}
	if got, err := j.GetJob("c"); err != nil || got.State != api.JobFailed {
		t.Errorf("job c: %v (%v), want failed", got.State, err)
	}
	checkUntouched(t, j, "c")
}
