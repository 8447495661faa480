package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/zkhost/zkhost/host/api"
)

// Integrity. bbolt checks its own meta pages, not the values it stores: a flipped
// bit inside a proof, a witness or a record reads back as if it were data. So
// every value the journal stores in a job's bucket has a CRC32C checksum beside
// it (written in the same transaction), checked on every read; a value that
// does not match is an ErrDamaged error, never data.
//
// Open walks the whole journal once, checking every checksum and every page
// bbolt reaches (a damaged page makes bbolt panic or fault; both are caught and
// turned into an error), and fails each job with a damaged record, leaving the
// others as they were (Repaired). A file too damaged to walk, an empty file
// and a file cut short are refused with an error naming the file and the way
// out.
//
// Journals written before checksums existed (format 1) open as they are: their
// records have no checksum and are read as before (Proof.Checked is false for
// their proofs, which the daemon verifies with gnark before serving); every
// value written from then on carries one, and the format becomes 2, which an
// older zkhost refuses (it would write values without checksums, and those
// would then read as damaged).

// ErrDamaged: a stored value does not match its checksum, or does not decode.
var ErrDamaged = errors.New("damaged record")

// ErrDamagedFile: the journal file itself is damaged (empty, cut short, or a
// page bbolt cannot read); Open refuses it.
var ErrDamagedFile = errors.New("journal file is damaged")

// Recovery is the operator's way out of a damaged journal file, which errors
// wrapping ErrDamagedFile end with.
const Recovery = "restore it from a backup, or move it aside (mv journal.db journal.db.damaged) to start with an empty journal (its jobs are then lost)"

// legacyFormat is the format of journals written before checksums existed.
const legacyFormat = "1"

// keyJobSum is the job record's checksum, beside it in the job's bucket.
var keyJobSum = []byte("job.sum")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is the CRC32C of a value with its kind (the sub-bucket's name) and
// key, so a value that lands under another key does not check out either.
func checksum(name, key, val []byte) []byte {
	c := crc32.Update(0, castagnoli, name)
	c = crc32.Update(c, castagnoli, key)
	c = crc32.Update(c, castagnoli, val)
	return binary.BigEndian.AppendUint32(nil, c)
}

// sumsName is the sub-bucket holding the checksums of sub-bucket name's values.
func sumsName(name []byte) []byte { return append(bytes.Clone(name), ".sum"...) }

// putSealed stores val under key in jb's sub-bucket name, and its checksum.
func putSealed(jb *bolt.Bucket, name, key, val []byte) error {
	sums, err := jb.CreateBucketIfNotExists(sumsName(name)) // absent in a format 1 job
	if err != nil {
		return err
	}
	if err := jb.Bucket(name).Put(key, val); err != nil {
		return err
	}
	return sums.Put(key, checksum(name, key, val))
}

// deleteSealed deletes key and its checksum from jb's sub-bucket name.
func deleteSealed(jb *bolt.Bucket, name, key []byte) error {
	if err := jb.Bucket(name).Delete(key); err != nil {
		return err
	}
	if sums := jb.Bucket(sumsName(name)); sums != nil {
		return sums.Delete(key)
	}
	return nil
}

// getChecked reads key from jb's sub-bucket name and checks it against its
// checksum. It returns nil when there is no value, and checked=false for a
// value written before checksums existed. The slice is bbolt's, valid only in
// the transaction.
func getChecked(jb *bolt.Bucket, jobID string, name []byte, idx int) (val []byte, checked bool, err error) {
	key := u32(idx)
	val = jb.Bucket(name).Get(key)
	if val == nil {
		return nil, false, nil
	}
	var sum []byte
	if sums := jb.Bucket(sumsName(name)); sums != nil {
		sum = sums.Get(key)
	}
	if sum == nil {
		return val, false, nil
	}
	if !bytes.Equal(sum, checksum(name, key, val)) {
		return nil, false, damaged(jobID, name, idx)
	}
	return val, true, nil
}

// damaged is the error of a value of sub-bucket name that fails its checksum.
func damaged(jobID string, name []byte, idx int) error {
	what := map[string]string{"parts": "record", "witness": "witness", "proof": "proof", "public": "public witness"}[string(name)]
	return fmt.Errorf("journal: job %s: %w: the %s of partition %d does not match its checksum", jobID, ErrDamaged, what, idx)
}

// Damage is a job Open found damaged and failed.
type Damage struct {
	JobID string
	// Reason says which record was damaged; it is also the failed job's error.
	Reason string
}

// Repaired returns the jobs Open found with a damaged record and failed.
func (j *Journal) Repaired() []Damage { return j.repaired }

// guard runs fn, turning a panic or a memory fault (bbolt reading a page that
// is damaged or lies past the end of a file cut short) into an error wrapping
// ErrDamagedFile.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("journal %s: %w (%v): %s", path, ErrDamagedFile, r, Recovery)
		}
	}()
	return fn()
}

// refuseEmpty refuses a journal file that exists but is empty. bbolt would lay
// out a new database in it and the daemon would start with no jobs; but Open
// never leaves an empty journal.db (create lays a new one out under another
// name first), so an empty one is a journal that lost its contents.
func refuseEmpty(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 0 {
		return nil // a missing file is created; bbolt reports other errors
	}
	return fmt.Errorf("journal %s: %w: it is empty (0 bytes), so every job it held is gone; %s", path, ErrDamagedFile, Recovery)
}

// create makes a new, laid-out journal at path when none exists: it is laid
// out under a temporary name and linked into place, so journal.db never exists
// empty or half laid out (refuseEmpty relies on that).
func create(path string) error {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return nil // exists, or an error bbolt will report
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".new-*") // mode 0600
	if err != nil {
		return err
	}
	name := tmp.Name()
	tmp.Close()
	defer os.Remove(name)
	db, err := bolt.Open(name, 0o600, nil)
	if err != nil {
		return err
	}
	if err := layOut(db); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	// A link fails when path exists: another process created it meanwhile,
	// and that one is used.
	if err := os.Link(name, path); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync() // the new name survives a crash
}

// scan checks every record of every job and walks the index buckets, and
// returns the jobs with a damaged record, in key order.
func scan(tx *bolt.Tx) ([]Damage, error) {
	var out []Damage
	for _, name := range [][]byte{bucketRequests, bucketSeq} {
		if err := tx.Bucket(name).ForEach(func(_, _ []byte) error { return nil }); err != nil {
			return nil, err
		}
	}
	err := tx.Bucket(bucketJobs).ForEach(func(id, _ []byte) error {
		jb := tx.Bucket(bucketJobs).Bucket(id)
		if jb == nil {
			return fmt.Errorf("%w: the jobs bucket holds a value under %q, not a job; %s", ErrDamagedFile, id, Recovery)
		}
		if err := checkJob(jb, string(id)); err != nil {
			out = append(out, Damage{JobID: string(id), Reason: err.Error()})
		}
		return nil
	})
	return out, err
}

// checkJob checks the records of a job a reader may use: its record and its
// partitions' records always; its proofs unless it failed or was cancelled
// (they are served only when it is done); its witnesses while it is unfinished.
func checkJob(jb *bolt.Bucket, id string) error {
	job, err := readJob(jb, id)
	if err != nil {
		return err
	}
	names := [][]byte{keyParts}
	switch {
	case !job.State.Terminal():
		names = append(names, keyProof, keyPublic, keyWitness)
	case job.State == api.JobDone:
		names = append(names, keyProof, keyPublic)
	}
	for _, name := range names {
		b := jb.Bucket(name)
		if b == nil {
			return fmt.Errorf("journal: job %s: %w: its %s bucket is missing", id, ErrDamaged, name)
		}
		err := b.ForEach(func(k, _ []byte) error {
			if len(k) != 4 {
				return fmt.Errorf("journal: job %s: %w: a %s key of %d bytes", id, ErrDamaged, name, len(k))
			}
			idx := int(binary.BigEndian.Uint32(k))
			if idx >= job.Partitions {
				return fmt.Errorf("journal: job %s: %w: a %s for partition %d of %d", id, ErrDamaged, name, idx, job.Partitions)
			}
			if _, _, err := getChecked(jb, id, name, idx); err != nil {
				return err
			}
			if string(name) == string(keyParts) {
				_, err := readPart(jb, job, idx)
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// failDamaged fails a job found damaged, with reason as its error: a job whose
// own record is damaged gets one rebuilt from what the journal still knows (its
// ID, its place in the order, its partitions); damaged partition records are
// rewritten as pending with the reason; its witnesses are dropped. Its proofs
// stay, unserved (a failed job serves none).
func failDamaged(tx *bolt.Tx, id, reason string, finished time.Time) error {
	jb := tx.Bucket(bucketJobs).Bucket([]byte(id))
	for _, name := range [][]byte{keyParts, keyWitness, keyProof, keyPublic} {
		if _, err := jb.CreateBucketIfNotExists(name); err != nil { // the damage may have lost one
			return err
		}
	}
	job, err := readJob(jb, id)
	if err != nil {
		job = Job{ID: id, Partitions: jb.Bucket(keyParts).Stats().KeyN}
		err := tx.Bucket(bucketSeq).ForEach(func(k, v []byte) error {
			if string(v) == id {
				job.Seq = binary.BigEndian.Uint64(k)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i := range job.Partitions {
		if _, err := readPart(jb, job, i); err != nil {
			if err := writePart(jb, i, partRecord{State: PartitionPending, Attempts: []string{reason}}); err != nil {
				return err
			}
		}
	}
	job.State = api.JobFailed
	job.Error = reason
	job.Finished = finished
	if err := clearBucket(jb, keyWitness); err != nil {
		return err
	}
	return writeJob(jb, job)
}

// FailDamaged fails job jobID, whose record a reader found damaged (an error
// wrapping ErrDamaged), with reason as its error, as Open does for the damage
// it finds; it fails a done job too, since its proofs can no longer be served.
func (j *Journal) FailDamaged(jobID, reason string) error {
	return j.w.update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketJobs).Bucket([]byte(jobID)) == nil {
			return fmt.Errorf("journal: job %q: %w", jobID, ErrNotFound)
		}
		return failDamaged(tx, jobID, reason, j.now())
	})
}
