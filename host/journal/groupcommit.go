package journal

import (
	"errors"
	"sync"
	"time"

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
	// refusable: the write would accept new work, so on a full disk it fails at
	// once (a NoSpaceError) instead of waiting for space (space.go).
	refusable bool
}

// Backoff of writes retried after a space error, and how often a journal short
// of space probes its storage when it has nothing else to write.
const (
	spaceBackoffMin = 50 * time.Millisecond
	spaceBackoffMax = 2 * time.Second
)

// committer queues writes for its goroutine, which commits them in groups.
type committer struct {
	db    *bolt.DB
	space *spaceKeeper

	mu      sync.Mutex
	pending []*writeReq
	closed  bool
	// giveUp: writes that wait for space fail with ErrClosed (set by interrupt
	// and close); closing is closed with it, to end a backoff early.
	giveUp  bool
	kick    chan struct{} // a write was queued (buffered, 1)
	closing chan struct{}
	stopped chan struct{} // closed when the goroutine has committed the last group

	// beforeCommit, when set (tests), runs before each transaction with its
	// group's size.
	beforeCommit func(n int)
}

func newCommitter(db *bolt.DB, space *spaceKeeper) *committer {
	c := &committer{db: db, space: space, kick: make(chan struct{}, 1), closing: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c
}

// update runs fn in a read-write transaction, committed and synced before it
// returns. fn may run more than once (when another write of its group fails, or
// the storage had no space), so it must set its results afresh on each run. On
// a full disk it waits until the write commits (or the journal closes).
func (c *committer) update(fn func(*bolt.Tx) error) error {
	return c.queue(&writeReq{fn: fn, done: make(chan error, 1)})
}

// updateRefusable is update for a write that accepts new work: while the
// journal is short of space it fails at once with a *NoSpaceError.
func (c *committer) updateRefusable(fn func(*bolt.Tx) error) error {
	if err := c.refusal(""); err != nil {
		return err
	}
	return c.queue(&writeReq{fn: fn, done: make(chan error, 1), refusable: true})
}

// refusal returns the NoSpaceError a refusable write gets while the journal is
// short of space (cause, when set, is the error that made it short), or nil.
func (c *committer) refusal(cause string) error {
	h := c.space.health()
	if h.Writable && cause == "" {
		return nil
	}
	if cause == "" {
		cause = h.LastError
	}
	return &NoSpaceError{Dir: h.Dir, Free: h.FreeBytes, Need: admitSlack + h.ReserveBytes, Cause: cause}
}

func (c *committer) queue(req *writeReq) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending = append(c.pending, req)
	c.mu.Unlock()
	c.poke()
	return <-req.done
}

func (c *committer) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// close commits the writes already queued, refuses new ones and waits for the
// goroutine to end. Writes waiting for space get ErrClosed.
func (c *committer) close() {
	c.interrupt()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.poke()
	<-c.stopped
}

// interrupt makes writes that wait for space, now or later, fail with
// ErrClosed; writes that can commit still do.
func (c *committer) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.giveUp {
		c.giveUp = true
		close(c.closing)
	}
}

func (c *committer) run() {
	defer close(c.stopped)
	backoff := time.Duration(0) // above zero while writes wait for space
	for {
		c.mu.Lock()
		closed := c.closed
		if c.giveUp && backoff > 0 {
			// Stopping on a full disk: what waits for space is given up. Each
			// write is progress the journal does not have yet (a partition
			// still pending), so a restarted daemon does that work again.
			for _, r := range c.pending {
				r.done <- ErrClosed
			}
			c.pending = nil
		}
		n := min(len(c.pending), maxGroup)
		group := c.pending[:n:n]
		c.pending = c.pending[n:]
		c.mu.Unlock()

		if len(group) > 0 {
			retry, committed := c.commit(group)
			if committed {
				c.space.recovered()
			}
			if len(retry) == 0 {
				backoff = 0
				continue
			}
			c.mu.Lock()
			c.pending = append(retry, c.pending...)
			c.mu.Unlock()
			backoff = min(max(2*backoff, spaceBackoffMin), spaceBackoffMax)
		} else if closed {
			return
		}
		var wait <-chan time.Time
		if backoff > 0 {
			wait = time.After(backoff)
		} else if c.space.isShort() {
			wait = time.After(spaceBackoffMax)
		}
		if len(group) > 0 && backoff > 0 {
			// Retry after the backoff, not at the next kick.
			select {
			case <-wait:
			case <-c.closing:
			}
			continue
		}
		select {
		case <-c.kick:
		case <-wait:
			c.probe()
		}
	}
}

// probe tests storage that was short of space with a small write, and restores
// the reserve when it commits.
func (c *committer) probe() {
	err := c.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyProbe, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	})
	if err != nil {
		if IsNoSpace(err) {
			c.space.markShort(err)
		}
		return
	}
	c.space.recovered()
}

// commit runs a group's writes in one transaction, dropping a failing write
// (with its error) and trying the rest again until they commit together. When
// the storage has no space, refusable writes fail with a NoSpaceError and the
// others are returned, to be retried once there is space. committed reports
// whether a transaction committed.
func (c *committer) commit(group []*writeReq) (retry []*writeReq, committed bool) {
	releasedReserve := false
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
		if failed >= 0 && !IsNoSpace(failErr) {
			group[failed].done <- failErr
			group = append(group[:failed:failed], group[failed+1:]...)
			continue
		}
		if failed >= 0 {
			err = failErr // a write of the group failed for lack of space
		}
		if !IsNoSpace(err) {
			// Committed, or the commit itself failed otherwise: the same for every write.
			for _, r := range group {
				r.done <- err
			}
			return nil, err == nil
		}
		c.space.markShort(err)
		keep := group[:0:0]
		for _, r := range group {
			if r.refusable {
				r.done <- c.refusal(err.Error())
			} else {
				keep = append(keep, r)
			}
		}
		group = keep
		if len(group) == 0 {
			return nil, false
		}
		if !releasedReserve && c.space.releaseReserve() {
			// The reserve's space is the journal's now: try again at once.
			releasedReserve = true
			continue
		}
		c.space.retried(len(group))
		return group, false
	}
	return nil, false
}
