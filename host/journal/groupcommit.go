package journal

import (
	"errors"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// ErrClosed: the journal was closed before the write could be made.
var ErrClosed = errors.New("journal is closed")

// maxGroup bounds the writes committed in one transaction, so one commit's
// dirty pages stay modest however many writers queue.
const maxGroup = 256

// Group commit. Every write syncs the database to disk before it returns, and a
// sync costs what the disk says: tens of microseconds on NVMe, tens or hundreds
// of milliseconds on a network volume. One transaction per write would cap the
// daemon at a few dozen proofs a second on such a disk, however fast its
// devices, since bbolt takes one writer at a time. So writes queue, and one
// goroutine commits whatever has queued in one transaction: a lone write commits
// at once (no batching delay, unlike bbolt's DB.Batch, which waits up to its
// MaxBatchDelay for company), and writes that arrive while a commit syncs share
// the next one.
//
// Each write keeps the meaning it has alone. Writes of a group run in queue
// order in one transaction. When one fails (a business error such as
// ErrJobFinished), the transaction rolls back; the failing write gets its error
// (what it would have got run alone after the writes before it, which commit
// next), and the group is tried again without it.

// writeReq is one queued write.
type writeReq struct {
	fn   func(*bolt.Tx) error
	done chan error
}

// committer queues writes for its goroutine, which commits them in groups.
type committer struct {
	db *bolt.DB

	mu      sync.Mutex
	wake    *sync.Cond
	pending []*writeReq
	closed  bool
	stopped chan struct{} // closed when the goroutine has committed the last group

	// beforeCommit, when set (tests), runs before each transaction with its
	// group's size.
	beforeCommit func(n int)
}

func newCommitter(db *bolt.DB) *committer {
	c := &committer{db: db, stopped: make(chan struct{})}
	c.wake = sync.NewCond(&c.mu)
	go c.run()
	return c
}

// update runs fn in a read-write transaction, committed and synced before it
// returns. fn may run more than once (when another write of its group fails), so
// it must set its results afresh on each run.
func (c *committer) update(fn func(*bolt.Tx) error) error {
	req := &writeReq{fn: fn, done: make(chan error, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending = append(c.pending, req)
	c.wake.Signal()
	c.mu.Unlock()
	return <-req.done
}

// close commits the writes already queued, refuses new ones and waits for the
// goroutine to end.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.wake.Signal()
	c.mu.Unlock()
	<-c.stopped
}

func (c *committer) run() {
	defer close(c.stopped)
	for {
		c.mu.Lock()
		for len(c.pending) == 0 && !c.closed {
			c.wake.Wait()
		}
		if len(c.pending) == 0 {
			c.mu.Unlock()
			return
		}
		n := min(len(c.pending), maxGroup)
		group := c.pending[:n:n]
		c.pending = c.pending[n:]
		c.mu.Unlock()
		c.commit(group)
	}
}

// commit runs a group's writes in one transaction, dropping a failing write
// (with its error) and trying the rest again until they commit together.
func (c *committer) commit(group []*writeReq) {
	for len(group) > 0 {
		if c.beforeCommit != nil {
			c.beforeCommit(len(group))
		}
		failed, failErr := -1, error(nil)
		err := c.db.Update(func(tx *bolt.Tx) error {
			for i, r := range group {
				if err := r.fn(tx); err != nil {
					failed, failErr = i, err
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			// Committed, or the commit itself failed: the same for every write.
			for _, r := range group {
				r.done <- err
			}
			return
		}
		group[failed].done <- failErr
		group = append(group[:failed:failed], group[failed+1:]...)
	}
}
