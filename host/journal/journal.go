package journal

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/zkhost/zkhost/host/api"
)

// DefaultLockTimeout is how long Open waits for another process to release
// the journal's file lock before it gives up with ErrLocked.
const DefaultLockTimeout = 2 * time.Second

// maxPartitions bounds a job's partitions; indices are stored in 32 bits.
const maxPartitions = 1 << 24

// formatVersion is the layout of the database; a journal of another version is
// refused rather than misread, except format 1 (integrity.go), which is read
// and becomes format 2.
const formatVersion = "2"

// Errors a caller may test for with errors.Is. The returned errors wrap these
// with the job and partition they concern.
var (
	// ErrLocked: another process has the journal open.
	ErrLocked = errors.New("journal is locked by another process")
	// ErrNotFound: no job has the ID.
	ErrNotFound = errors.New("no such job")
	// ErrRequestIDConflict: the request ID already names a job with other
	// content (a client reused an ID for a different submission).
	ErrRequestIDConflict = errors.New("request ID already names a job with other content")
	// ErrJobExists: a job with the ID already exists.
	ErrJobExists = errors.New("job ID already exists")
	// ErrJobFinished: the job is done, failed or cancelled and takes no
	// further changes.
	ErrJobFinished = errors.New("job is finished")
	// ErrAlreadyProved: the partition already has a proof.
	ErrAlreadyProved = errors.New("partition already proved")
	// ErrIncomplete: the job still has partitions without a proof.
	ErrIncomplete = errors.New("job has unproved partitions")
	// ErrNoWitness: the partition's witness is no longer kept (the partition is
	// proved or the job finished).
	ErrNoWitness = errors.New("witness no longer kept")
)

// A job's state is an api.JobState (the one type of the idea), stored as its
// name ("queued", "running", "done", "failed", "cancelled"), as it always was.
// Queued and running jobs are unfinished and resume after a restart; the other
// three are final (api.JobState.Terminal).

// settable reports whether s is a state a job may be given.
func settable(s api.JobState) bool {
	return s == api.JobQueued || s == api.JobRunning || s.Terminal()
}

// PartitionState is a partition's state. Only what survives a restart is
// kept: a partition being proved when the daemon stops is pending again.
type PartitionState string

// The partition states.
const (
	PartitionPending PartitionState = "pending"
	PartitionProved  PartitionState = "proved"
)

// Job is a proof job as the journal keeps it.
type Job struct {
	// ID names the job; CreateJob makes one up when it is empty.
	ID string
	// RequestID is the client's idempotency key; empty when the client gave
	// none (then every submission is a new job). It is scoped by Owner: two
	// clients may use the same key for different jobs.
	RequestID string
	// Owner is the identity of the client that submitted the job; empty for
	// jobs journaled before owners existed (an admin's).
	Owner string
	// ContentDigest identifies what was submitted (circuit and witnesses), so
	// a retry can be told from a different submission under the same RequestID.
	ContentDigest [32]byte
	Circuit       string
	// Class is the job's priority class, stored as its name; ClassUnspecified
	// (stored as no name) for jobs journaled before classes existed.
	Class api.Class
	// Seq orders jobs by submission; the journal assigns it, strictly
	// increasing and never reused.
	Seq uint64
	// Partitions is the number of partitions (one witness each).
	Partitions int
	Created    time.Time
	// Finished is when the job reached a final state; zero until then.
	Finished time.Time
	State    api.JobState
	// Error says why a failed job failed.
	Error string
	// Pending lists the partitions without a proof, ascending. Filled by every
	// read; ignored by CreateJob.
	Pending []int
}

// Partition is one partition's record.
type Partition struct {
	Index int
	State PartitionState
	// Attempts holds the reason of each failed attempt, oldest first.
	Attempts []string
}

// Proof is one partition's proof and public witness.
type Proof struct {
	Index  int
	Proof  []byte
	Public []byte
	// Checked: both matched the checksums stored with them. False for a proof
	// written before the journal kept checksums (integrity.go), which a reader
	// should verify before trusting it.
	Checked bool
}

// Filter selects jobs for ListJobs. The zero Filter selects every job.
type Filter struct {
	// States, when not empty, keeps jobs in one of these states.
	States []api.JobState
	// Circuit, when set, keeps jobs of this circuit.
	Circuit string
	// Owner, when set, keeps the jobs of this owner.
	Owner string
	// Limit, when above zero, keeps only the Limit most recent matches.
	Limit int
}

// Journal is an open job journal.
type Journal struct {
	db    *bolt.DB
	w     *committer // every write goes through it (groupcommit.go)
	space *spaceKeeper
	path  string
	// now is the clock for Created and Finished; tests replace it.
	now func() time.Time
	// repaired lists the jobs Open found damaged and failed (integrity.go).
	repaired []Damage
}

// Bucket layout:
//
//	meta      version -> formatVersion
//	jobs      <job id> -> bucket:
//	              job      -> jobRecord (JSON)
//	              parts    <index> -> partRecord (JSON)
//	              witness  <index> -> witness bytes, until proved
//	              proof    <index> -> proof bytes
//	              public   <index> -> public witness bytes
//	              job.sum, and the buckets parts.sum, witness.sum, proof.sum,
//	              public.sum <index> -> CRC32C of the value of the same name
//	              and key (integrity.go)
//	requests  <request id>, or <owner> NUL <request id> -> job id
//	seq       <seq> -> job id (submission order; its bucket sequence is the
//	          counter Seq comes from)
//
// Indices and sequence numbers are big-endian, so cursors walk them in order.
var (
	bucketMeta     = []byte("meta")
	bucketJobs     = []byte("jobs")
	bucketRequests = []byte("requests")
	bucketSeq      = []byte("seq")

	keyVersion = []byte("version")
	keyProbe   = []byte("probe") // written by the space probe (groupcommit.go)
	keyJob     = []byte("job")
	keyParts   = []byte("parts")
	keyWitness = []byte("witness")
	keyProof   = []byte("proof")
	keyPublic  = []byte("public")
)

// Options are the settings of an open journal.
type Options struct {
	// LockTimeout is how long Open waits for another process's file lock (at
	// least 1ms; DefaultLockTimeout when zero).
	LockTimeout time.Duration
	// ReserveBytes is the space kept in a file beside the journal and released
	// when the disk fills (space.go); 0 keeps none.
	ReserveBytes uint64
}

// Open opens the journal at path, creating it (and its directory, mode 0700)
// when missing. It waits DefaultLockTimeout for another process's lock and
// keeps no reserve.
func Open(path string) (*Journal, error) {
	return OpenWith(path, Options{})
}

// OpenTimeout is Open with the given wait for the file lock (at least 1ms).
func OpenTimeout(path string, lockTimeout time.Duration) (*Journal, error) {
	return OpenWith(path, Options{LockTimeout: lockTimeout})
}

// initialMmapSize is the address space bbolt maps the journal with from the
// start (it maps more when the file outgrows it). Each time bbolt maps again
// it first copies every value the open write transaction holds out of the old
// mapping, a job's inputs among them, so large inputs were copied once more at
// each step of the file's growth (BENCHMARKS.md, "A circomlib circuit of
// 2^20"). Address space mapped up front costs no memory: the pages are the
// file's, read in as they are touched. 16 GiB, or less where int is narrower
// (bbolt maps at most 2 GB on a 32-bit machine). Where the process may not
// take that much address space (a ulimit -v, a container's limit), Open maps
// as bbolt does by default. A variable for BenchmarkCreateJobLarge.
var initialMmapSize = int(min(1<<34, uint64(math.MaxInt)>>3))

// OpenWith opens the journal at path with opts.
func OpenWith(path string, opts Options) (*Journal, error) {
	lockTimeout := opts.LockTimeout
	if lockTimeout == 0 {
		lockTimeout = DefaultLockTimeout
	}
	if path == "" {
		return nil, errors.New("journal: empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := refuseEmpty(path); err != nil {
		return nil, err
	}
	if err := create(path); err != nil {
		return nil, fmt.Errorf("journal %s: creating it: %w", path, err)
	}
	// bbolt panics on some damage (a freelist page that is not one, a page
	// past the end of a file cut short); guard makes that an error. The file
	// then stays mapped, and so locked, in this process: the daemon exits on
	// this error.
	var db *bolt.DB
	openDB := func(mmapSize int) error {
		return guard(path, func() (err error) {
			db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: max(lockTimeout, time.Millisecond), InitialMmapSize: mmapSize})
			return err
		})
	}
	err := openDB(initialMmapSize)
	if errors.Is(err, syscall.ENOMEM) && initialMmapSize > 0 {
		err = openDB(0) // an address-space limit: map only the file, as bbolt does by default
	}
	if errors.Is(err, ErrDamagedFile) {
		return nil, err
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("journal %s: %w (is another zkhost using this state directory?)", path, ErrLocked)
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) {
		// Both meta pages are damaged (one alone bbolt survives, losing at
		// most the last transaction): nothing here can be trusted.
		return nil, fmt.Errorf("journal %s: %w: the file is damaged; %s", path, err, Recovery)
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j := &Journal{db: db, path: path, now: time.Now}
	if err := j.check(); err != nil {
		guard(path, db.Close) // after a panic in check, Close may panic too
		return nil, err
	}
	space := newSpaceKeeper(path, opts.ReserveBytes)
	j.space, j.w = space, newCommitter(db, space)
	return j, nil
}

// check readies a journal just opened: it tightens the file's mode, refuses a
// format it does not read, lays out a new journal, upgrades a format 1 journal,
// and checks every record (integrity.go), failing the jobs with a damaged one.
// A journal laid out, current and undamaged is only read here: a daemon
// restarted on a full disk must open it to resume its jobs, and a write would
// fail.
func (j *Journal) check() error {
	db, path := j.db, j.path
	// The mode bbolt passes applies only to a new file; an older, looser file
	// is tightened, since it holds private witnesses.
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("journal %s: %w", path, err)
		}
	}
	laidOut, legacy := false, false
	err = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			// bbolt grows the file before it writes past its end, so a file
			// shorter than its last transaction's pages was cut short.
			if fi.Size() < tx.Size() {
				return fmt.Errorf("journal %s: %w: it is cut short (%d bytes, its last transaction wrote up to byte %d); %s", path, ErrDamagedFile, fi.Size(), tx.Size(), Recovery)
			}
			laidOut = true
			for _, name := range [][]byte{bucketMeta, bucketJobs, bucketRequests, bucketSeq} {
				if tx.Bucket(name) == nil {
					laidOut = false
				}
			}
			if !laidOut {
				return nil
			}
			switch v := tx.Bucket(bucketMeta).Get(keyVersion); string(v) {
			case formatVersion:
			case legacyFormat:
				legacy = true
			default:
				return fmt.Errorf("format version %q; this zkhost reads version %s", v, formatVersion)
			}
			var err error
			j.repaired, err = scan(tx)
			return err
		})
	})
	if errors.Is(err, ErrDamagedFile) {
		return err
	}
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	if !laidOut {
		err = layOut(db)
	}
	if err == nil && (legacy || len(j.repaired) > 0) {
		err = db.Update(func(tx *bolt.Tx) error {
			if err := tx.Bucket(bucketMeta).Put(keyVersion, []byte(formatVersion)); err != nil {
				return err
			}
			for _, d := range j.repaired {
				if err := failDamaged(tx, d.JobID, d.Reason, j.now()); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("journal %s: %w", path, err)
	}
	return nil
}

// layOut creates the top-level buckets and the format version of a new journal.
func layOut(db *bolt.DB) error {
	return db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketJobs, bucketRequests, bucketSeq} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		switch v := meta.Get(keyVersion); {
		case v == nil:
			return meta.Put(keyVersion, []byte(formatVersion))
		case string(v) != formatVersion:
			return fmt.Errorf("format version %q; this zkhost reads version %s", v, formatVersion)
		}
		return nil
	})
}

// Path returns the journal's file.
func (j *Journal) Path() string { return j.path }

// Close closes the journal: writes already queued are committed, later ones
// fail with ErrClosed.
func (j *Journal) Close() error {
	j.w.close()
	if err := j.db.Close(); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}

// CreateJob records a new job and its witnesses, one a partition, in state
// queued, and returns it with Seq (and ID, when empty) assigned. When
// job.RequestID already names a job, CreateJob writes nothing: it returns that
// job and existing=true if its ContentDigest is the same, and an error wrapping
// ErrRequestIDConflict if not.
func (j *Journal) CreateJob(job Job, witnesses [][]byte) (out Job, existing bool, err error) {
	if job.Circuit == "" {
		return Job{}, false, errors.New("journal: job has no circuit")
	}
	if !job.Class.Valid() {
		return Job{}, false, fmt.Errorf("journal: job has an unknown priority class %v", job.Class)
	}
	if len(witnesses) == 0 {
		return Job{}, false, errors.New("journal: job has no witnesses")
	}
	if len(witnesses) > maxPartitions {
		return Job{}, false, fmt.Errorf("journal: job has %d partitions, more than %d", len(witnesses), maxPartitions)
	}
	if job.Partitions != 0 && job.Partitions != len(witnesses) {
		return Job{}, false, fmt.Errorf("journal: job says %d partitions but has %d witnesses", job.Partitions, len(witnesses))
	}
	for i, w := range witnesses {
		if len(w) == 0 {
			return Job{}, false, fmt.Errorf("journal: witness %d is empty", i)
		}
		if int64(len(w)) > bolt.MaxValueSize {
			return Job{}, false, fmt.Errorf("journal: witness %d is %d bytes, more than the journal stores in one value (%d)", i, len(w), int64(bolt.MaxValueSize))
		}
	}
	if job.ID == "" {
		job.ID, err = NewID()
		if err != nil {
			return Job{}, false, err
		}
	}
	job.Partitions = len(witnesses)
	job.State = api.JobQueued
	job.Finished = time.Time{}
	job.Error = ""
	if job.Created.IsZero() {
		job.Created = j.now()
	}
	if job.RequestID != "" && !j.space.health().Writable {
		// Short of space, a retried submission still finds its job: reading
		// needs no space, and its client must not be told to come back for
		// work that was accepted.
		if prior, ok, err := j.JobForRequest(job.Owner, job.RequestID); err != nil || ok {
			if err == nil && prior.ContentDigest != job.ContentDigest {
				err = fmt.Errorf("journal: request %q: %w (job %s)", job.RequestID, ErrRequestIDConflict, prior.ID)
			}
			return prior, err == nil, err
		}
	}
	err = j.w.updateRefusable(func(tx *bolt.Tx) error {
		out, existing = Job{}, false // a group commit may run this again
		reqs := tx.Bucket(bucketRequests)
		if job.RequestID != "" {
			if id := reqs.Get(requestKey(job.Owner, job.RequestID)); id != nil {
				jb := tx.Bucket(bucketJobs).Bucket(id)
				if jb == nil {
					return fmt.Errorf("journal: request %q points at missing job %s", job.RequestID, id)
				}
				prior, err := readJob(jb, string(id))
				if err != nil {
					return err
				}
				if prior.ContentDigest != job.ContentDigest {
					return fmt.Errorf("journal: request %q: %w (job %s)", job.RequestID, ErrRequestIDConflict, prior.ID)
				}
				out, existing = prior, true
				out.Pending, err = pendingParts(jb, string(id))
				return err
			}
		}
		jobs := tx.Bucket(bucketJobs)
		if jobs.Bucket([]byte(job.ID)) != nil {
			return fmt.Errorf("journal: job %s: %w", job.ID, ErrJobExists)
		}
		seqs := tx.Bucket(bucketSeq)
		seq, err := seqs.NextSequence()
		if err != nil {
			return err
		}
		job.Seq = seq
		if err := seqs.Put(u64(seq), []byte(job.ID)); err != nil {
			return err
		}
		if job.RequestID != "" {
			if err := reqs.Put(requestKey(job.Owner, job.RequestID), []byte(job.ID)); err != nil {
				return err
			}
		}
		jb, err := jobs.CreateBucket([]byte(job.ID))
		if err != nil {
			return err
		}
		if err := writeJob(jb, job); err != nil {
			return err
		}
		for _, name := range [][]byte{keyParts, keyWitness, keyProof, keyPublic} {
			if _, err := jb.CreateBucket(name); err != nil {
				return err
			}
		}
		pending, err := json.Marshal(partRecord{State: PartitionPending})
		if err != nil {
			return err
		}
		for i, w := range witnesses {
			if err := putSealed(jb, keyParts, u32(i), pending); err != nil {
				return err
			}
			if err := putSealed(jb, keyWitness, u32(i), w); err != nil {
				return err
			}
		}
		out = job
		out.Pending = make([]int, len(witnesses))
		for i := range out.Pending {
			out.Pending[i] = i
		}
		return nil
	})
	if err != nil {
		return Job{}, false, err
	}
	return out, existing, nil
}

// JobForRequest returns the job owner's request id reqID names, if any, read
// without writing.
func (j *Journal) JobForRequest(owner, reqID string) (job Job, ok bool, err error) {
	err = j.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketRequests).Get(requestKey(owner, reqID))
		if id == nil {
			return nil
		}
		jb, rec, err := openJob(tx, string(id))
		if err != nil {
			return err
		}
		job, ok = rec, true
		job.Pending, err = pendingParts(jb, rec.ID)
		return err
	})
	return job, ok, err
}

// MarkPartitionDone stores partition idx's proof and public witness, marks it
// proved and drops its witness, which is no longer needed to resume. It returns
// how many partitions of the job are still without a proof; the job's state is
// the caller's to set (SetJobState) when that reaches zero.
func (j *Journal) MarkPartitionDone(jobID string, idx int, proof, public []byte) (remaining int, err error) {
	if len(proof) == 0 {
		return 0, fmt.Errorf("journal: job %s partition %d: empty proof", jobID, idx)
	}
	err = j.w.update(func(tx *bolt.Tx) error {
		jb, rec, err := openLivePart(tx, jobID, idx)
		if err != nil {
			return err
		}
		if rec.State == PartitionProved {
			return fmt.Errorf("journal: job %s partition %d: %w", jobID, idx, ErrAlreadyProved)
		}
		rec.State = PartitionProved
		if err := writePart(jb, idx, rec); err != nil {
			return err
		}
		if err := putSealed(jb, keyProof, u32(idx), proof); err != nil {
			return err
		}
		if err := putSealed(jb, keyPublic, u32(idx), public); err != nil {
			return err
		}
		if err := deleteSealed(jb, keyWitness, u32(idx)); err != nil {
			return err
		}
		pending, err := pendingParts(jb, jobID)
		remaining = len(pending)
		return err
	})
	if err != nil {
		return 0, err
	}
	return remaining, nil
}

// RecordAttempt records a failed attempt at partition idx and why it failed,
// and returns how many attempts have failed so far.
func (j *Journal) RecordAttempt(jobID string, idx int, reason string) (attempts int, err error) {
	err = j.w.update(func(tx *bolt.Tx) error {
		jb, rec, err := openLivePart(tx, jobID, idx)
		if err != nil {
			return err
		}
		rec.Attempts = append(rec.Attempts, reason)
		attempts = len(rec.Attempts)
		return writePart(jb, idx, rec)
	})
	if err != nil {
		return 0, err
	}
	return attempts, nil
}

// SetJobState moves a job to state, with errMsg as its error (for a failed
// job). A final state stamps Finished and drops the remaining witnesses.
// Setting done needs every partition proved (ErrIncomplete otherwise); a
// finished job refuses another state (ErrJobFinished) but takes its own state
// again as a no-op, so a repeated cancel is harmless.
func (j *Journal) SetJobState(jobID string, state api.JobState, errMsg string) error {
	if !settable(state) {
		return fmt.Errorf("journal: unknown job state %v", state)
	}
	return j.w.update(func(tx *bolt.Tx) error {
		jb, job, err := openJob(tx, jobID)
		if err != nil {
			return err
		}
		if job.State.Terminal() {
			if job.State == state {
				return nil
			}
			return fmt.Errorf("journal: job %s is %s, cannot become %s: %w", jobID, job.State, state, ErrJobFinished)
		}
		if state == api.JobDone {
			pending, err := pendingParts(jb, jobID)
			if err != nil {
				return err
			}
			if len(pending) > 0 {
				return fmt.Errorf("journal: job %s: %w: %d of %d", jobID, ErrIncomplete, len(pending), job.Partitions)
			}
		}
		job.State = state
		job.Error = errMsg
		if state.Terminal() {
			job.Finished = j.now()
			if err := clearBucket(jb, keyWitness); err != nil {
				return err
			}
		}
		return writeJob(jb, job)
	})
}

// GetJob returns the job with the ID.
func (j *Journal) GetJob(jobID string) (job Job, err error) {
	err = j.viewJob(jobID, func(jb *bolt.Bucket, rec Job) error {
		job = rec
		job.Pending, err = pendingParts(jb, jobID)
		return err
	})
	return job, err
}

// Partitions returns the records of a job's partitions, in index order.
func (j *Journal) Partitions(jobID string) (parts []Partition, err error) {
	err = j.viewJob(jobID, func(jb *bolt.Bucket, job Job) error {
		return jb.Bucket(keyParts).ForEach(func(k, _ []byte) error {
			idx := int(binary.BigEndian.Uint32(k))
			rec, err := readPart(jb, job, idx)
			if err != nil {
				return err
			}
			parts = append(parts, Partition{Index: idx, State: rec.State, Attempts: rec.Attempts})
			return nil
		})
	})
	return parts, err
}

// ListJobs returns the jobs f selects, in submission order.
func (j *Journal) ListJobs(f Filter) ([]Job, error) {
	var out []Job
	err := j.db.View(func(tx *bolt.Tx) error {
		jobs := tx.Bucket(bucketJobs)
		c := tx.Bucket(bucketSeq).Cursor()
		// Walk newest first so a Limit stops early, then reverse.
		for k, id := c.Last(); k != nil; k, id = c.Prev() {
			jb := jobs.Bucket(id)
			if jb == nil {
				return fmt.Errorf("journal: sequence %d points at missing job %s", binary.BigEndian.Uint64(k), id)
			}
			job, err := readJob(jb, string(id))
			if err != nil {
				return err
			}
			if !f.match(job) {
				continue
			}
			if job.Pending, err = pendingParts(jb, job.ID); err != nil {
				return err
			}
			out = append(out, job)
			if f.Limit > 0 && len(out) == f.Limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out, nil
}

func (f Filter) match(job Job) bool {
	if f.Circuit != "" && job.Circuit != f.Circuit {
		return false
	}
	if f.Owner != "" && job.Owner != f.Owner {
		return false
	}
	if len(f.States) == 0 {
		return true
	}
	for _, s := range f.States {
		if job.State == s {
			return true
		}
	}
	return false
}

// Unfinished returns the queued and running jobs in submission order, each
// with the indices of its partitions still to prove: what a restarted daemon
// resumes.
func (j *Journal) Unfinished() ([]Job, error) {
	return j.ListJobs(Filter{States: []api.JobState{api.JobQueued, api.JobRunning}})
}

// Witness returns partition idx's witness. It fails with ErrNoWitness once the
// partition is proved or the job finished.
func (j *Journal) Witness(jobID string, idx int) (w []byte, err error) {
	err = j.viewJob(jobID, func(jb *bolt.Bucket, job Job) error {
		if idx < 0 || idx >= job.Partitions {
			return fmt.Errorf("journal: job %s has no partition %d (it has %d)", jobID, idx, job.Partitions)
		}
		v, _, err := getChecked(jb, jobID, keyWitness, idx)
		if err != nil {
			return err
		}
		if v == nil {
			return fmt.Errorf("journal: job %s partition %d: %w", jobID, idx, ErrNoWitness)
		}
		w = bytes.Clone(v) // bbolt's slice is valid only inside the transaction
		return nil
	})
	return w, err
}

// Proofs returns every partition's proof and public witness, in index order.
// It fails with ErrIncomplete while any partition lacks a proof.
func (j *Journal) Proofs(jobID string) (proofs []Proof, err error) {
	err = j.viewJob(jobID, func(jb *bolt.Bucket, job Job) error {
		for i := 0; i < job.Partitions; i++ {
			p, proofChecked, err := getChecked(jb, jobID, keyProof, i)
			if err != nil {
				return err
			}
			if p == nil {
				pending, _ := pendingParts(jb, jobID)
				return fmt.Errorf("journal: job %s: %w: %d of %d", jobID, ErrIncomplete, len(pending), job.Partitions)
			}
			pub, pubChecked, err := getChecked(jb, jobID, keyPublic, i)
			if err != nil {
				return err
			}
			proofs = append(proofs, Proof{Index: i, Proof: bytes.Clone(p), Public: bytes.Clone(pub), Checked: proofChecked && pubChecked})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return proofs, nil
}

// PruneFinished deletes the finished jobs that finished before olderThan, with
// their proofs and request IDs, and returns how many it deleted. Unfinished
// jobs are never pruned.
func (j *Journal) PruneFinished(olderThan time.Time) (n int, err error) {
	// Refusable: pruning is housekeeping, tried again at its next round.
	err = j.w.updateRefusable(func(tx *bolt.Tx) error {
		jobs, seqs, reqs := tx.Bucket(bucketJobs), tx.Bucket(bucketSeq), tx.Bucket(bucketRequests)
		var doomed []Job
		err := seqs.ForEach(func(_, id []byte) error {
			jb := jobs.Bucket(id)
			if jb == nil {
				return fmt.Errorf("journal: sequence index points at missing job %s", id)
			}
			job, err := readJob(jb, string(id))
			if err != nil {
				return err
			}
			if job.State.Terminal() && job.Finished.Before(olderThan) {
				doomed = append(doomed, job)
			}
			return nil
		})
		if err != nil {
			return err
		}
		// Deleting while a cursor walks a bucket skips keys, so delete after.
		for _, job := range doomed {
			if err := jobs.DeleteBucket([]byte(job.ID)); err != nil {
				return err
			}
			if err := seqs.Delete(u64(job.Seq)); err != nil {
				return err
			}
			if key := requestKey(job.Owner, job.RequestID); job.RequestID != "" && string(reqs.Get(key)) == job.ID {
				if err := reqs.Delete(key); err != nil {
					return err
				}
			}
		}
		n = len(doomed)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// jobRecord is a Job as stored: Pending is derived, the digest is hex, the
// class and the state are their names (api.Class and api.JobState are
// converted here and in readJob, nowhere else).
type jobRecord struct {
	ID         string    `json:"id"`
	RequestID  string    `json:"request_id,omitempty"`
	Owner      string    `json:"owner,omitempty"`
	Digest     string    `json:"content_digest"`
	Circuit    string    `json:"circuit"`
	Class      string    `json:"class,omitempty"`
	Seq        uint64    `json:"seq"`
	Partitions int       `json:"partitions"`
	Created    time.Time `json:"created"`
	Finished   time.Time `json:"finished"`
	State      string    `json:"state"`
	Error      string    `json:"error,omitempty"`
}

type partRecord struct {
	State    PartitionState `json:"state"`
	Attempts []string       `json:"attempts,omitempty"`
}

func writeJob(jb *bolt.Bucket, job Job) error {
	data, err := json.Marshal(jobRecord{
		ID: job.ID, RequestID: job.RequestID, Owner: job.Owner, Digest: hex.EncodeToString(job.ContentDigest[:]),
		Circuit: job.Circuit, Class: classToDisk(job.Class), Seq: job.Seq, Partitions: job.Partitions,
		Created: job.Created, Finished: job.Finished, State: job.State.String(), Error: job.Error,
	})
	if err != nil {
		return err
	}
	if err := jb.Put(keyJob, data); err != nil {
		return err
	}
	return jb.Put(keyJobSum, checksum(keyJob, nil, data))
}

// readJob reads job id's record from its bucket jb and checks it against its
// checksum (a record written before checksums existed has none).
func readJob(jb *bolt.Bucket, id string) (Job, error) {
	data := jb.Get(keyJob)
	if sum := jb.Get(keyJobSum); sum != nil && !bytes.Equal(sum, checksum(keyJob, nil, data)) {
		return Job{}, fmt.Errorf("journal: job %s: %w: the job record does not match its checksum", id, ErrDamaged)
	}
	var rec jobRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return Job{}, fmt.Errorf("journal: job %s: %w: the job record does not decode: %v", id, ErrDamaged, err)
	}
	if rec.ID != id {
		return Job{}, fmt.Errorf("journal: job %s: %w: the job record names job %q", id, ErrDamaged, rec.ID)
	}
	job := Job{
		ID: rec.ID, RequestID: rec.RequestID, Owner: rec.Owner, Circuit: rec.Circuit, Seq: rec.Seq,
		Partitions: rec.Partitions, Created: rec.Created, Finished: rec.Finished, Error: rec.Error,
	}
	var err error
	if job.Class, err = classFromDisk(rec.Class); err != nil {
		return Job{}, fmt.Errorf("journal: job %s: %w: the job record: %v", id, ErrDamaged, err)
	}
	if job.State, err = api.ParseJobState(rec.State); err != nil {
		return Job{}, fmt.Errorf("journal: job %s: %w: the job record: %v", id, ErrDamaged, err)
	}
	d, err := hex.DecodeString(rec.Digest)
	if err != nil || len(d) != len(job.ContentDigest) {
		return Job{}, fmt.Errorf("journal: job %s: %w: the job record has content digest %q", id, ErrDamaged, rec.Digest)
	}
	copy(job.ContentDigest[:], d)
	return job, nil
}

// classToDisk is the name a class is stored as: none for ClassUnspecified.
func classToDisk(c api.Class) string {
	if c == api.ClassUnspecified {
		return ""
	}
	return c.String()
}

// classFromDisk reads a stored class name; none is ClassUnspecified (a job
// journaled before classes existed).
func classFromDisk(name string) (api.Class, error) {
	if name == "" {
		return api.ClassUnspecified, nil
	}
	return api.ParseClass(name)
}

// viewJob runs f on job jobID's bucket and record in a read transaction; a
// job that is not there is ErrNotFound.
func (j *Journal) viewJob(jobID string, f func(jb *bolt.Bucket, job Job) error) error {
	return j.db.View(func(tx *bolt.Tx) error {
		jb, job, err := openJob(tx, jobID)
		if err != nil {
			return err
		}
		return f(jb, job)
	})
}

// openJob finds a job's bucket and record.
func openJob(tx *bolt.Tx, jobID string) (*bolt.Bucket, Job, error) {
	jb := tx.Bucket(bucketJobs).Bucket([]byte(jobID))
	if jb == nil {
		return nil, Job{}, fmt.Errorf("journal: job %q: %w", jobID, ErrNotFound)
	}
	job, err := readJob(jb, jobID)
	return jb, job, err
}

// openLivePart opens a job's bucket and partition idx's record for a change
// to the partition, which a finished job refuses.
func openLivePart(tx *bolt.Tx, jobID string, idx int) (*bolt.Bucket, partRecord, error) {
	jb, job, err := openJob(tx, jobID)
	if err != nil {
		return nil, partRecord{}, err
	}
	if job.State.Terminal() {
		return nil, partRecord{}, fmt.Errorf("journal: job %s is %s: %w", jobID, job.State, ErrJobFinished)
	}
	rec, err := readPart(jb, job, idx)
	return jb, rec, err
}

func readPart(jb *bolt.Bucket, job Job, idx int) (partRecord, error) {
	if idx < 0 || idx >= job.Partitions {
		return partRecord{}, fmt.Errorf("journal: job %s has no partition %d (it has %d)", job.ID, idx, job.Partitions)
	}
	v, _, err := getChecked(jb, job.ID, keyParts, idx)
	if err != nil {
		return partRecord{}, err
	}
	var rec partRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return partRecord{}, fmt.Errorf("journal: job %s: %w: the record of partition %d does not decode: %v", job.ID, ErrDamaged, idx, err)
	}
	if rec.State != PartitionPending && rec.State != PartitionProved {
		return partRecord{}, fmt.Errorf("journal: job %s: %w: the record of partition %d has state %q", job.ID, ErrDamaged, idx, rec.State)
	}
	return rec, nil
}

func writePart(jb *bolt.Bucket, idx int, rec partRecord) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return putSealed(jb, keyParts, u32(idx), data)
}

// pendingParts returns the indices of job id's partitions without a proof.
func pendingParts(jb *bolt.Bucket, id string) ([]int, error) {
	pending := []int{}
	err := jb.Bucket(keyParts).ForEach(func(k, _ []byte) error {
		idx := int(binary.BigEndian.Uint32(k))
		v, _, err := getChecked(jb, id, keyParts, idx)
		if err != nil {
			return err
		}
		var rec partRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("journal: job %s: %w: the record of partition %d does not decode: %v", id, ErrDamaged, idx, err)
		}
		if rec.State != PartitionProved {
			pending = append(pending, int(binary.BigEndian.Uint32(k)))
		}
		return nil
	})
	return pending, err
}

// clearBucket empties the sub-bucket name of jb, and drops its checksums.
func clearBucket(jb *bolt.Bucket, name []byte) error {
	if err := jb.DeleteBucket(name); err != nil {
		return err
	}
	if err := jb.DeleteBucket(sumsName(name)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return err
	}
	_, err := jb.CreateBucket(name)
	return err
}

// requestKey is a request id's key in the requests bucket: the id itself for
// the owner "" (as journals before owners wrote it), else the owner, a NUL and
// the id, so clients' keys never meet.
func requestKey(owner, reqID string) []byte {
	if owner == "" {
		return []byte(reqID)
	}
	return []byte(owner + "\x00" + reqID)
}

func u32(i int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(i)) }

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// NewID returns 16 random bytes in hex: a job id (a cluster's jobs take the same).
func NewID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("journal: making a job ID: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
