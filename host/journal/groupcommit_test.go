package journal

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/zkhost/zkhost/host/api"
)

// gate holds a journal's first commit until released, and records the size of
// every group committed, so a test decides exactly which writes share a
// transaction.
type gate struct {
	mu      sync.Mutex
	sizes   []int
	entered chan struct{}
	release chan struct{}
	held    chan error // the held write's result
}

// holdFirstCommit makes an empty write and holds its commit: the writes a test
// queues next wait behind it, and commit as the test releases the gate.
func holdFirstCommit(j *Journal) *gate {
	g := &gate{entered: make(chan struct{}), release: make(chan struct{}), held: make(chan error, 1)}
	j.w.beforeCommit = func(n int) {
		g.mu.Lock()
		g.sizes = append(g.sizes, n)
		first := len(g.sizes) == 1
		g.mu.Unlock()
		if first {
			close(g.entered)
			<-g.release
		}
	}
	go func() { g.held <- j.w.update(func(*bolt.Tx) error { return nil }) }()
	<-g.entered
	return g
}

// open lets the held commit finish and returns its error.
func (g *gate) open() error {
	close(g.release)
	return <-g.held
}

func (g *gate) groups() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.sizes)
}

// waitPending waits until n writes queue behind the held commit.
func waitPending(t *testing.T, j *Journal, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		j.w.mu.Lock()
		got := len(j.w.pending)
		j.w.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupCommitSharesATransaction: writes that arrive while a commit is in
// progress commit together in the next transaction, and each gets the answer it
// would get alone (remaining counts down through every value once).
func TestGroupCommitSharesATransaction(t *testing.T) {
	j, _ := openTemp(t)
	const n = 8
	job := newJob(t, j, "group", "", n)
	g := holdFirstCommit(j)

	remaining := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			remaining[i], errs[i] = j.MarkPartitionDone(job.ID, i, []byte{byte(i + 1)}, nil)
		})
	}
	waitPending(t, j, n)
	if err := g.open(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("partition %d: %v", i, err)
		}
	}
	if got := g.groups(); !slices.Equal(got, []int{1, n}) {
		t.Errorf("commits of %v writes, want [1 %d]: the %d writes queued behind the first commit should share one", got, n, n)
	}
	slices.Sort(remaining)
	for i, r := range remaining {
		if r != i {
			t.Errorf("remaining counts %v, want each of 0..%d once", remaining, n-1)
			break
		}
	}
	got, err := j.GetJob(job.ID)
	if err != nil || len(got.Pending) != 0 {
		t.Errorf("after the group: pending %v, %v", got.Pending, err)
	}
}

// TestGroupCommitFailingWrite: a write that fails inside a group gets its own
// error, as if it had run alone after the writes queued before it; the others
// commit.
func TestGroupCommitFailingWrite(t *testing.T) {
	j, _ := openTemp(t)
	job := newJob(t, j, "fail", "", 3)
	g := holdFirstCommit(j)

	// Queued in this order, one at a time.
	writes := []struct {
		name string
		do   func() error
		want error
	}{
		{"prove 0", func() error { _, err := j.MarkPartitionDone(job.ID, 0, []byte("p0"), nil); return err }, nil},
		{"prove 0 again", func() error { _, err := j.MarkPartitionDone(job.ID, 0, []byte("p0'"), nil); return err }, ErrAlreadyProved},
		{"attempt on no job", func() error { _, err := j.RecordAttempt("nosuchjob", 0, "x"); return err }, ErrNotFound},
		{"prove 1", func() error { _, err := j.MarkPartitionDone(job.ID, 1, []byte("p1"), nil); return err }, nil},
		{"attempt on 2", func() error { _, err := j.RecordAttempt(job.ID, 2, "device lost"); return err }, nil},
	}
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, w := range writes {
		wg.Go(func() {
			errs[i] = w.do()
		})
		waitPending(t, j, i+1)
	}
	if err := g.open(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, w := range writes {
		if (w.want == nil) != (errs[i] == nil) || (w.want != nil && !errors.Is(errs[i], w.want)) {
			t.Errorf("%s: %v, want %v", w.name, errs[i], w.want)
		}
	}
	// The held commit, then the group of five, four after the first failure, three after the second.
	if got := g.groups(); !slices.Equal(got, []int{1, 5, 4, 3}) {
		t.Errorf("transactions of %v writes, want [1 5 4 3]", got)
	}
	parts, err := j.Partitions(job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if parts[0].State != PartitionProved || parts[1].State != PartitionProved || parts[2].State != PartitionPending {
		t.Errorf("partition states %v %v %v, want proved proved pending", parts[0].State, parts[1].State, parts[2].State)
	}
	if !slices.Equal(parts[2].Attempts, []string{"device lost"}) {
		t.Errorf("partition 2 attempts %q", parts[2].Attempts)
	}
	if _, err := j.MarkPartitionDone(job.ID, 2, []byte("p2"), nil); err != nil {
		t.Fatal(err)
	}
	if err := j.SetJobState(job.ID, api.JobDone, ""); err != nil {
		t.Fatal(err)
	}
	proofs, err := j.Proofs(job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(proofs) != 3 || string(proofs[0].Proof) != "p0" || string(proofs[1].Proof) != "p1" {
		t.Errorf("proofs %+v, want p0 (the first write, not the failed second) and p1", proofs)
	}
}

// TestCloseCommitsQueuedWrites: Close commits what is queued, then refuses.
func TestCloseCommitsQueuedWrites(t *testing.T) {
	j, path := openTemp(t)
	job := newJob(t, j, "close", "", 2)
	g := holdFirstCommit(j)
	queued := make(chan error, 1)
	go func() { _, err := j.MarkPartitionDone(job.ID, 0, []byte("p0"), nil); queued <- err }()
	waitPending(t, j, 1)
	closed := make(chan error, 1)
	go func() { closed <- j.Close() }()
	// Close has marked the journal closed once a new write is refused.
	deadline := time.Now().Add(10 * time.Second)
	for {
		j.w.mu.Lock()
		done := j.w.closed
		j.w.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Close did not start")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := j.RecordAttempt(job.ID, 1, "late"); !errors.Is(err, ErrClosed) {
		t.Errorf("a write after Close: %v, want ErrClosed", err)
	}
	if err := g.open(); err != nil {
		t.Error(err)
	}
	if err := <-queued; err != nil {
		t.Errorf("a write queued before Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}

	j2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	got, err := j2.GetJob(job.ID)
	if err != nil || !slices.Equal(got.Pending, []int{1}) {
		t.Errorf("reopened: pending %v, %v; want [1] (the queued proof kept)", got.Pending, err)
	}
}
