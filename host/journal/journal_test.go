package journal

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/zkhost/zkhost/host/api"
)

func openTemp(t *testing.T) (*Journal, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j, path
}

// witnesses makes n distinct witnesses for a job.
func witnesses(job string, n int) [][]byte {
	ws := make([][]byte, n)
	for i := range ws {
		ws[i] = []byte(fmt.Sprintf("witness %s/%d %s", job, i, strings.Repeat("w", 100*i)))
	}
	return ws
}

func digest(ws [][]byte) [32]byte { return sha256.Sum256(bytes.Join(ws, []byte{0})) }

func newJob(t *testing.T, j *Journal, id, req string, n int) Job {
	t.Helper()
	ws := witnesses(id, n)
	job, existing, err := j.CreateJob(Job{ID: id, RequestID: req, ContentDigest: digest(ws), Circuit: "merkle", Class: api.ClassNormal}, ws)
	if err != nil || existing {
		t.Fatalf("CreateJob(%s): existing=%v err=%v", id, existing, err)
	}
	return job
}

func TestRoundTrip(t *testing.T) {
	j, _ := openTemp(t)
	created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ws := witnesses("a", 3)
	job, existing, err := j.CreateJob(Job{ID: "a", RequestID: "req-a", ContentDigest: digest(ws), Circuit: "merkle", Class: api.ClassHigh, Created: created}, ws)
	if err != nil || existing {
		t.Fatalf("CreateJob: %v %v", existing, err)
	}
	want := Job{ID: "a", RequestID: "req-a", ContentDigest: digest(ws), Circuit: "merkle", Class: api.ClassHigh,
		Seq: 1, Partitions: 3, Created: created, State: api.JobQueued, Pending: []int{0, 1, 2}}
	if !reflect.DeepEqual(job, want) {
		t.Errorf("CreateJob returned %+v, want %+v", job, want)
	}
	got, err := j.GetJob("a")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(created) {
		t.Errorf("created %v, want %v", got.Created, created)
	}
	got.Created = created
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetJob = %+v, want %+v", got, want)
	}
	for i, w := range ws {
		if back, err := j.Witness("a", i); err != nil || !bytes.Equal(back, w) {
			t.Errorf("Witness(%d) = %q, %v", i, back, err)
		}
	}

	if n, err := j.RecordAttempt("a", 1, "backend crashed"); err != nil || n != 1 {
		t.Errorf("RecordAttempt = %d, %v", n, err)
	}
	if n, err := j.RecordAttempt("a", 1, "proof did not verify"); err != nil || n != 2 {
		t.Errorf("RecordAttempt = %d, %v", n, err)
	}
	if err := j.SetJobState("a", api.JobRunning, ""); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rem, err := j.MarkPartitionDone("a", i, []byte(fmt.Sprintf("proof %d", i)), []byte(fmt.Sprintf("public %d", i)))
		if err != nil || rem != 2-i {
			t.Fatalf("MarkPartitionDone(%d) = %d, %v; want %d", i, rem, err, 2-i)
		}
		if _, err := j.Witness("a", i); !errors.Is(err, ErrNoWitness) {
			t.Errorf("witness of proved partition %d: %v, want ErrNoWitness", i, err)
		}
	}
	parts, err := j.Partitions("a")
	if err != nil {
		t.Fatal(err)
	}
	wantParts := []Partition{
		{Index: 0, State: PartitionProved},
		{Index: 1, State: PartitionProved, Attempts: []string{"backend crashed", "proof did not verify"}},
		{Index: 2, State: PartitionProved},
	}
	if !reflect.DeepEqual(parts, wantParts) {
		t.Errorf("Partitions = %+v", parts)
	}
	finished := created.Add(time.Minute)
	j.now = func() time.Time { return finished }
	if err := j.SetJobState("a", api.JobDone, ""); err != nil {
		t.Fatal(err)
	}
	proofs, err := j.Proofs("a")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range proofs {
		if p.Index != i || string(p.Proof) != fmt.Sprintf("proof %d", i) || string(p.Public) != fmt.Sprintf("public %d", i) {
			t.Errorf("proof %d = %+v", i, p)
		}
	}
	got, _ = j.GetJob("a")
	if got.State != api.JobDone || !got.Finished.Equal(finished) || len(got.Pending) != 0 {
		t.Errorf("after done: %+v", got)
	}
}

func TestCreateIsIdempotent(t *testing.T) {
	j, _ := openTemp(t)
	ws := witnesses("x", 2)
	first, existing, err := j.CreateJob(Job{RequestID: "r1", ContentDigest: digest(ws), Circuit: "merkle"}, ws)
	if err != nil || existing || first.ID == "" {
		t.Fatalf("first create: %+v %v %v", first, existing, err)
	}
	if _, err := j.MarkPartitionDone(first.ID, 0, []byte("p"), nil); err != nil {
		t.Fatal(err)
	}
	// A retried submission gets the job back, progress included, and writes
	// nothing: no new sequence number is used.
	again, existing, err := j.CreateJob(Job{RequestID: "r1", ContentDigest: digest(ws), Circuit: "merkle"}, ws)
	if err != nil || !existing {
		t.Fatalf("retry: existing=%v err=%v", existing, err)
	}
	if again.ID != first.ID || again.Seq != first.Seq || !reflect.DeepEqual(again.Pending, []int{1}) {
		t.Errorf("retry returned %+v, want job %s with partition 1 pending", again, first.ID)
	}
	// The same request ID for other content is a conflict.
	other := witnesses("y", 2)
	_, _, err = j.CreateJob(Job{RequestID: "r1", ContentDigest: digest(other), Circuit: "merkle"}, other)
	if !errors.Is(err, ErrRequestIDConflict) || !strings.Contains(err.Error(), first.ID) {
		t.Errorf("conflict: %v", err)
	}
	// Another request ID is another job, with the next sequence number.
	next, existing, err := j.CreateJob(Job{RequestID: "r2", ContentDigest: digest(ws), Circuit: "merkle"}, ws)
	if err != nil || existing || next.Seq != first.Seq+1 || next.ID == first.ID {
		t.Errorf("second request: %+v %v %v", next, existing, err)
	}
	// Without a request ID, every call is a new job.
	a, _, _ := j.CreateJob(Job{Circuit: "merkle", ContentDigest: digest(ws)}, ws)
	b, _, _ := j.CreateJob(Job{Circuit: "merkle", ContentDigest: digest(ws)}, ws)
	if a.ID == b.ID || b.Seq != a.Seq+1 {
		t.Errorf("no request ID: %s/%d and %s/%d", a.ID, a.Seq, b.ID, b.Seq)
	}
	// A taken job ID is refused.
	if _, _, err := j.CreateJob(Job{ID: a.ID, Circuit: "merkle"}, ws); !errors.Is(err, ErrJobExists) {
		t.Errorf("duplicate ID: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	j, _ := openTemp(t)
	newJob(t, j, "a", "", 2)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no circuit", func() error { _, _, err := j.CreateJob(Job{}, witnesses("z", 1)); return err }(), "no circuit"},
		{"no witnesses", func() error { _, _, err := j.CreateJob(Job{Circuit: "c"}, nil); return err }(), "no witnesses"},
		{"empty witness", func() error { _, _, err := j.CreateJob(Job{Circuit: "c"}, [][]byte{{1}, {}}); return err }(), "witness 1 is empty"},
		{"partition count", func() error {
			_, _, err := j.CreateJob(Job{Circuit: "c", Partitions: 3}, witnesses("z", 2))
			return err
		}(), "says 3 partitions but has 2"},
		{"unknown job", func() error { _, err := j.GetJob("nope"); return err }(), "no such job"},
		{"partition out of range", func() error { _, err := j.MarkPartitionDone("a", 2, []byte("p"), nil); return err }(), "no partition 2"},
		{"negative partition", func() error { _, err := j.RecordAttempt("a", -1, "x"); return err }(), "no partition -1"},
		{"empty proof", func() error { _, err := j.MarkPartitionDone("a", 0, nil, nil); return err }(), "empty proof"},
		{"witness out of range", func() error { _, err := j.Witness("a", 5); return err }(), "no partition 5"},
		{"bad state", j.SetJobState("a", api.JobState(42), ""), "unknown job state 42"},
		{"unspecified state", j.SetJobState("a", api.JobStateUnspecified, ""), "unknown job state unspecified"},
		{"bad class", func() error {
			_, _, err := j.CreateJob(Job{Circuit: "c", Class: api.Class(9)}, witnesses("y", 1))
			return err
		}(), "unknown priority class 9"},
		{"done too early", j.SetJobState("a", api.JobDone, ""), "unproved partitions"},
		{"proofs too early", func() error { _, err := j.Proofs("a"); return err }(), "unproved partitions: 2 of 2"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, tc.err, tc.want)
		}
	}
	if _, err := j.GetJob("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetJob(nope) = %v, want ErrNotFound", err)
	}
}

func TestFinishedJobs(t *testing.T) {
	j, _ := openTemp(t)
	newJob(t, j, "a", "", 2)
	if _, err := j.MarkPartitionDone("a", 0, []byte("p"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := j.MarkPartitionDone("a", 0, []byte("p"), nil); !errors.Is(err, ErrAlreadyProved) {
		t.Errorf("second proof: %v, want ErrAlreadyProved", err)
	}
	if err := j.SetJobState("a", api.JobCancelled, "client cancelled"); err != nil {
		t.Fatal(err)
	}
	// A cancelled job keeps no witnesses and takes no more partition changes,
	// but a repeated cancel is harmless.
	if _, err := j.Witness("a", 1); !errors.Is(err, ErrNoWitness) {
		t.Errorf("witness after cancel: %v", err)
	}
	if _, err := j.MarkPartitionDone("a", 1, []byte("p"), nil); !errors.Is(err, ErrJobFinished) {
		t.Errorf("proof after cancel: %v", err)
	}
	if _, err := j.RecordAttempt("a", 1, "late"); !errors.Is(err, ErrJobFinished) {
		t.Errorf("attempt after cancel: %v", err)
	}
	if err := j.SetJobState("a", api.JobCancelled, ""); err != nil {
		t.Errorf("repeated cancel: %v", err)
	}
	if err := j.SetJobState("a", api.JobRunning, ""); !errors.Is(err, ErrJobFinished) {
		t.Errorf("reviving a cancelled job: %v", err)
	}
	job, _ := j.GetJob("a")
	if job.Error != "client cancelled" || job.Finished.IsZero() || !reflect.DeepEqual(job.Pending, []int{1}) {
		t.Errorf("cancelled job: %+v", job)
	}
}

// TestReopen simulates a restart: everything written before Close is there
// after Open, and the unfinished work is exactly what was left.
func TestReopen(t *testing.T) {
	j, path := openTemp(t)
	newJob(t, j, "done", "r-done", 2)
	newJob(t, j, "half", "r-half", 4)
	newJob(t, j, "untouched", "", 2)
	newJob(t, j, "failed", "", 1)
	for i := range 2 {
		if _, err := j.MarkPartitionDone("done", i, []byte{byte(i)}, []byte{9}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.SetJobState("done", api.JobDone, ""); err != nil {
		t.Fatal(err)
	}
	if err := j.SetJobState("half", api.JobRunning, ""); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		if _, err := j.MarkPartitionDone("half", i, []byte("proof"), []byte("pub")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := j.RecordAttempt("half", 3, "device lost"); err != nil {
		t.Fatal(err)
	}
	if err := j.SetJobState("failed", api.JobFailed, "out of attempts"); err != nil {
		t.Fatal(err)
	}
	before, err := j.ListJobs(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	j2, err := Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer j2.Close()
	after, err := j2.ListJobs(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Fatalf("%d jobs after reopen, %d before", len(after), len(before))
	}
	for i := range before {
		b, a := before[i], after[i]
		if !a.Created.Equal(b.Created) || !a.Finished.Equal(b.Finished) {
			t.Errorf("job %s times changed", a.ID)
		}
		a.Created, a.Finished, b.Created, b.Finished = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("job changed across reopen:\n%+v\n%+v", b, a)
		}
	}
	unfinished, err := j2.Unfinished()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, job := range unfinished {
		got = append(got, fmt.Sprintf("%s:%s:%v", job.ID, job.State, job.Pending))
	}
	if want := []string{"half:running:[1 3]", "untouched:queued:[0 1]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Unfinished = %v, want %v", got, want)
	}
	// What the restarted host needs to resume is there.
	for _, i := range []int{1, 3} {
		if w, err := j2.Witness("half", i); err != nil || !bytes.Equal(w, witnesses("half", 4)[i]) {
			t.Errorf("witness %d after reopen: %q, %v", i, w, err)
		}
	}
	if parts, _ := j2.Partitions("half"); !reflect.DeepEqual(parts[3].Attempts, []string{"device lost"}) {
		t.Errorf("attempts after reopen: %+v", parts)
	}
	if proofs, err := j2.Proofs("done"); err != nil || len(proofs) != 2 || proofs[1].Proof[0] != 1 {
		t.Errorf("proofs after reopen: %+v, %v", proofs, err)
	}
	// Idempotency survives the restart, and sequence numbers keep rising.
	ws := witnesses("half", 4)
	if job, existing, err := j2.CreateJob(Job{RequestID: "r-half", ContentDigest: digest(ws), Circuit: "merkle"}, ws); err != nil || !existing || job.ID != "half" {
		t.Errorf("resubmission after restart: %+v %v %v", job, existing, err)
	}
	if job := newJob(t, j2, "later", "", 1); job.Seq != 5 {
		t.Errorf("seq after reopen = %d, want 5", job.Seq)
	}
}

func TestListJobs(t *testing.T) {
	j, _ := openTemp(t)
	for i := range 6 {
		ws := witnesses(fmt.Sprint(i), 1)
		circuit := []string{"merkle", "chain"}[i%2]
		if _, _, err := j.CreateJob(Job{ID: fmt.Sprintf("j%d", i), Circuit: circuit, ContentDigest: digest(ws)}, ws); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.SetJobState("j1", api.JobCancelled, ""); err != nil {
		t.Fatal(err)
	}
	if err := j.SetJobState("j4", api.JobRunning, ""); err != nil {
		t.Fatal(err)
	}
	ids := func(f Filter) string {
		jobs, err := j.ListJobs(f)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, job := range jobs {
			s = append(s, job.ID)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "j0,j1,j2,j3,j4,j5"},
		{Filter{Limit: 2}, "j4,j5"},
		{Filter{Circuit: "chain"}, "j1,j3,j5"},
		{Filter{Circuit: "chain", Limit: 1}, "j5"},
		{Filter{States: []api.JobState{api.JobCancelled, api.JobRunning}}, "j1,j4"},
		{Filter{States: []api.JobState{api.JobQueued}, Circuit: "merkle"}, "j0,j2"},
		{Filter{Circuit: "nope"}, ""},
	} {
		if got := ids(tc.f); got != tc.want {
			t.Errorf("ListJobs(%+v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestPruneFinished(t *testing.T) {
	j, _ := openTemp(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"old-done", "old-failed", "new-done", "running"} {
		newJob(t, j, id, "req-"+id, 1)
		j.now = func() time.Time { return t0.Add(time.Duration(i) * time.Hour) }
		switch id {
		case "old-done", "new-done":
			if _, err := j.MarkPartitionDone(id, 0, []byte("p"), nil); err != nil {
				t.Fatal(err)
			}
			if err := j.SetJobState(id, api.JobDone, ""); err != nil {
				t.Fatal(err)
			}
		case "old-failed":
			if err := j.SetJobState(id, api.JobFailed, "boom"); err != nil {
				t.Fatal(err)
			}
		case "running":
			if err := j.SetJobState(id, api.JobRunning, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Cut at t0+1h30m: the jobs finished at t0 and t0+1h go, the one
	// finished at t0+2h stays, and the running one is never pruned.
	n, err := j.PruneFinished(t0.Add(90 * time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("PruneFinished = %d, %v; want 2", n, err)
	}
	for _, id := range []string{"old-done", "old-failed"} {
		if _, err := j.GetJob(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after prune: %v", id, err)
		}
	}
	left, _ := j.ListJobs(Filter{})
	if len(left) != 2 || left[0].ID != "new-done" || left[1].ID != "running" {
		t.Errorf("left after prune: %+v", left)
	}
	// A pruned job's request ID is free again; a kept one's is not.
	ws := witnesses("fresh", 1)
	if job, existing, err := j.CreateJob(Job{RequestID: "req-old-done", ContentDigest: digest(ws), Circuit: "c"}, ws); err != nil || existing || job.Seq != 5 {
		t.Errorf("reusing a pruned request ID: %+v %v %v", job, existing, err)
	}
	if _, existing, _ := j.CreateJob(Job{RequestID: "req-new-done", ContentDigest: digest(witnesses("new-done", 1)), Circuit: "c"}, ws); !existing {
		t.Error("a kept job's request ID was forgotten")
	}
	if n, err := j.PruneFinished(t0.Add(100 * time.Hour)); err != nil || n != 1 {
		t.Errorf("second prune = %d, %v; want 1", n, err)
	}
}

// TestConcurrentUse runs writers and readers at once; run it under -race.
func TestConcurrentUse(t *testing.T) {
	j, _ := openTemp(t)
	const workers, jobsEach, parts = 4, 5, 3
	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := range workers {
		wg.Go(func() {
			for k := range jobsEach {
				id := fmt.Sprintf("w%d-j%d", w, k)
				ws := witnesses(id, parts)
				// Every job is submitted twice, as a client retry would.
				for range 2 {
					if _, _, err := j.CreateJob(Job{ID: id, RequestID: "req-" + id, ContentDigest: digest(ws), Circuit: "c"}, ws); err != nil {
						errs <- err
						return
					}
				}
				for i := range parts {
					if _, err := j.RecordAttempt(id, i, "flaky"); err != nil {
						errs <- err
						return
					}
					if _, err := j.MarkPartitionDone(id, i, []byte(id), nil); err != nil {
						errs <- err
						return
					}
				}
				if err := j.SetJobState(id, api.JobDone, ""); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range 20 {
				if _, err := j.Unfinished(); err != nil {
					errs <- err
					return
				}
				if _, err := j.ListJobs(Filter{Limit: 3}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := j.ListJobs(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != workers*jobsEach {
		t.Fatalf("%d jobs, want %d", len(all), workers*jobsEach)
	}
	for i, job := range all {
		if job.Seq != uint64(i+1) || job.State != api.JobDone {
			t.Errorf("job %d: %+v", i, job)
		}
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	_, path := openTemp(t)
	start := time.Now()
	j2, err := OpenTimeout(path, 100*time.Millisecond)
	if err == nil {
		j2.Close()
		t.Fatal("second Open of a journal in use succeeded")
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "journal is locked by another process") {
		t.Errorf("second Open: %v", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("second Open took %v", waited)
	}
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	// A journal left readable by others is tightened when opened.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("reopened journal mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\"): want an error")
	}
	// A file that is not a journal is refused with its name.
	bogus := filepath.Join(t.TempDir(), "bogus.db")
	if err := os.WriteFile(bogus, bytes.Repeat([]byte("x"), 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bogus); err == nil || !strings.Contains(err.Error(), bogus) {
		t.Errorf("Open(not a journal) = %v", err)
	}
}

func TestFormatVersion(t *testing.T) {
	j, path := openTemp(t)
	if err := j.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyVersion, []byte("99"))
	}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), `format version "99"`) {
		t.Errorf("Open of a future journal: %v", err)
	}
}

// BenchmarkJob measures one job's journal traffic: a create with 10 witnesses
// of 64 KiB, 10 proofs and the final state, each a synced transaction.
func BenchmarkJob(b *testing.B) {
	j, err := Open(filepath.Join(b.TempDir(), "journal.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	ws := make([][]byte, 10)
	for i := range ws {
		ws[i] = bytes.Repeat([]byte{byte(i + 1)}, 64<<10)
	}
	proof := make([]byte, 192)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		job, _, err := j.CreateJob(Job{Circuit: "c"}, ws)
		if err != nil {
			b.Fatal(err)
		}
		for i := range ws {
			if _, err := j.MarkPartitionDone(job.ID, i, proof, proof[:32]); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.SetJobState(job.ID, api.JobDone, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateJobLarge measures the create of a job of 8 partitions of
// 33.6 MB each, the .wtns of a circom circuit of 2^20 wires, with the journal
// mapped as bbolt maps it by default (growing the mapping with the file,
// "grow") and as Open maps it (initialMmapSize up front). Figures in
// BENCHMARKS.md.
func BenchmarkCreateJobLarge(b *testing.B) {
	ws := make([][]byte, 8)
	for i := range ws {
		ws[i] = bytes.Repeat([]byte{byte(i + 1)}, 33_584_460)
	}
	for _, tc := range []struct {
		name string
		size int
	}{{"grow", 0}, {"16GiB", initialMmapSize}} {
		b.Run("mmap="+tc.name, func(b *testing.B) {
			defer func(old int) { initialMmapSize = old }(initialMmapSize)
			initialMmapSize = tc.size
			j, err := Open(filepath.Join(b.TempDir(), "journal.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			b.SetBytes(int64(len(ws) * len(ws[0])))
			for b.Loop() {
				if _, _, err := j.CreateJob(Job{Circuit: "c"}, ws); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOwnersScopeRequestIDs: two owners may use one request id for different
// jobs; each retry finds its owner's job; ListJobs filters by owner.
func TestOwnersScopeRequestIDs(t *testing.T) {
	j, err := Open(filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	a, _, err := j.CreateJob(Job{Circuit: "c", RequestID: "r1", Owner: "alice", ContentDigest: [32]byte{1}}, [][]byte{{1}})
	if err != nil {
		t.Fatal(err)
	}
	b, existing, err := j.CreateJob(Job{Circuit: "c", RequestID: "r1", Owner: "bob", ContentDigest: [32]byte{2}}, [][]byte{{2}})
	if err != nil || existing || b.ID == a.ID {
		t.Fatalf("bob's r1: %v existing=%v id=%s (alice's %s); want a job of his own", err, existing, b.ID, a.ID)
	}
	again, existing, err := j.CreateJob(Job{Circuit: "c", RequestID: "r1", Owner: "alice", ContentDigest: [32]byte{1}}, [][]byte{{1}})
	if err != nil || !existing || again.ID != a.ID || again.Owner != "alice" {
		t.Fatalf("alice's retry: %v existing=%v %+v", err, existing, again)
	}
	if got, ok, err := j.JobForRequest("bob", "r1"); err != nil || !ok || got.ID != b.ID {
		t.Errorf("JobForRequest(bob, r1) = %s %v %v", got.ID, ok, err)
	}
	jobs, err := j.ListJobs(Filter{Owner: "bob"})
	if err != nil || len(jobs) != 1 || jobs[0].ID != b.ID {
		t.Errorf("bob's jobs: %v, %v", jobs, err)
	}
}

// TestOnDiskNames pins the stored form of a job's class and state: their
// names, as the journal wrote them when it kept them as strings. A journal
// written before api.Class and api.JobState became the journal's types opens
// and reads the same, and a name the journal does not know is a corrupt
// record, reported with the job, not a job of some default class or state.
func TestOnDiskNames(t *testing.T) {
	j, path := openTemp(t)
	ws := witnesses("h", 1)
	if _, _, err := j.CreateJob(Job{ID: "h", ContentDigest: digest(ws), Circuit: "merkle", Class: api.ClassHigh}, ws); err != nil {
		t.Fatal(err)
	}
	if err := j.SetJobState("h", api.JobCancelled, "by a test"); err != nil {
		t.Fatal(err)
	}
	newJob(t, j, "plain", "", 1)
	ws = witnesses("u", 1)
	if _, _, err := j.CreateJob(Job{ID: "u", ContentDigest: digest(ws), Circuit: "merkle"}, ws); err != nil {
		t.Fatal(err)
	}
	raw := func(id string) string {
		var out string
		if err := j.db.View(func(tx *bolt.Tx) error {
			out = string(tx.Bucket(bucketJobs).Bucket([]byte(id)).Get(keyJob))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		id       string
		want     []string
		wantNone string
	}{
		{"h", []string{`"class":"high"`, `"state":"cancelled"`}, ""},
		{"plain", []string{`"class":"normal"`, `"state":"queued"`}, ""},
		{"u", []string{`"state":"queued"`}, `"class"`},
	} {
		rec := raw(tc.id)
		for _, w := range tc.want {
			if !strings.Contains(rec, w) {
				t.Errorf("job %s is stored as %s, without %s", tc.id, rec, w)
			}
		}
		if tc.wantNone != "" && strings.Contains(rec, tc.wantNone) {
			t.Errorf("job %s is stored as %s, with %s", tc.id, rec, tc.wantNone)
		}
	}

	// Records as the journal wrote them before (class and state as strings,
	// no class for jobs journaled before classes existed, no checksum for
	// those journaled before checksums), then two a newer or broken writer
	// could leave.
	d := digest(witnesses("plain", 1))
	put := func(id, rec string) {
		t.Helper()
		if err := j.db.Update(func(tx *bolt.Tx) error {
			jb := tx.Bucket(bucketJobs).Bucket([]byte(id))
			if err := jb.Delete(keyJobSum); err != nil {
				return err
			}
			return jb.Put(keyJob, []byte(rec))
		}); err != nil {
			t.Fatal(err)
		}
	}
	old := func(id, class, state string) string {
		c := ""
		if class != "" {
			c = fmt.Sprintf(`"class":%q,`, class)
		}
		return fmt.Sprintf(`{"id":%q,"content_digest":"%x","circuit":"merkle",%s"seq":1,"partitions":1,`+
			`"created":"2025-03-01T12:00:00Z","finished":"0001-01-01T00:00:00Z","state":%q}`, id, d, c, state)
	}
	put("plain", old("plain", "low", "running"))
	put("u", old("u", "", "queued"))
	j.Close()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	for _, tc := range []struct {
		id    string
		class api.Class
		state api.JobState
	}{
		{"h", api.ClassHigh, api.JobCancelled},
		{"plain", api.ClassLow, api.JobRunning},
		{"u", api.ClassUnspecified, api.JobQueued},
	} {
		got, err := j.GetJob(tc.id)
		if err != nil || got.Class != tc.class || got.State != tc.state {
			t.Errorf("GetJob(%s) = class %v state %v, %v; want %v %v", tc.id, got.Class, got.State, err, tc.class, tc.state)
		}
	}
	unfinished, err := j.Unfinished()
	if err != nil || len(unfinished) != 2 {
		t.Errorf("Unfinished = %d jobs, %v; want plain and u", len(unfinished), err)
	}

	for _, tc := range []struct{ class, state, want string }{
		{"urgent", "queued", `job plain: damaged record: the job record: unknown priority class "urgent"`},
		{"low", "paused", `job plain: damaged record: the job record: unknown job state "paused"`},
		{"low", "", `job plain: damaged record: the job record: unknown job state ""`},
	} {
		put("plain", old("plain", tc.class, tc.state))
		if _, err := j.GetJob("plain"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("GetJob of a record with class %q state %q: %v, want an error saying %s", tc.class, tc.state, err, tc.want)
		}
	}
}

// TestOpenUnderAddressSpaceLimit: a process whose address space is limited
// below the journal's up-front mapping (a ulimit -v, a container's limit)
// still opens it, mapping only the file. The test runs itself again under
// `ulimit -v`, as such a daemon would run.
func TestOpenUnderAddressSpaceLimit(t *testing.T) {
	if dir := os.Getenv("ZKHOST_JOURNAL_LIMITED"); dir != "" {
		j, err := Open(filepath.Join(dir, "journal.db"))
		if err != nil {
			t.Fatalf("Open under an address-space limit: %v", err)
		}
		if _, _, err := j.CreateJob(Job{Circuit: "c"}, [][]byte{{1}}); err != nil {
			t.Fatal(err)
		}
		j.Close()
		return
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("no sh to run the limited process: %v", err)
	}
	// 4 GiB: room for the Go runtime and the test binary, not for the mapping.
	cmd := exec.Command("sh", "-c", `ulimit -v 4194304 && exec "$0" -test.run '^TestOpenUnderAddressSpaceLimit$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), "ZKHOST_JOURNAL_LIMITED="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the limited process: %v\n%s", err, out)
	}
}
