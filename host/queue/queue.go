package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/zkhost/zkhost/host/api"
)

// ErrDuplicate is returned (wrapped) by Push and Requeue when a partition with
// the same job sequence number and index is already queued.
var ErrDuplicate = errors.New("partition already queued")

// Item is one queued partition: where it sorts (Class, JobSeq, Partition)
// and what it carries (Value, opaque to the queue).
type Item[T any] struct {
	// Class is the priority class of the item's job.
	Class api.Class
	// JobSeq is the job's sequence number, assigned at submit in increasing
	// order; a lower JobSeq dispatches first within a class.
	JobSeq uint64
	// Partition is the partition index within the job, from 0.
	Partition int
	// Value is the caller's payload.
	Value T
}

// key identifies a partition across the whole queue.
type key struct {
	jobSeq    uint64
	partition int
}

func (it *Item[T]) key() key { return key{it.JobSeq, it.Partition} }

// compareItems orders two items of one class: by job, then by partition.
func compareItems[T any](a, b Item[T]) int {
	if c := cmp.Compare(a.JobSeq, b.JobSeq); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// Queue is the ordered dispatch queue of partitions. The zero value is not
// usable; call New. All methods are safe for concurrent use.
type Queue[T any] struct {
	mu sync.Mutex
	// byClass holds each class's items sorted by (JobSeq, Partition),
	// indexed by Class.Index(). A sorted slice keeps Pop, PopIf and Snapshot
	// in dispatch order with no extra sorting; inserts cost a memmove, which
	// is nothing next to a partition's seconds of synthesis.
	byClass [api.NumClasses][]Item[T]
	queued  map[key]api.Class
	// changed is closed (and set to nil) whenever an item is added, waking
	// every blocked consumer to look again. It is created lazily by a
	// consumer that finds nothing to take, so producers pay nothing when no
	// one waits.
	changed  chan struct{}
	requeued uint64
}

// New returns an empty queue.
func New[T any]() *Queue[T] {
	return &Queue[T]{queued: make(map[key]api.Class)}
}

// Push adds a new partition in its place: after every queued item of a more
// urgent class, and in (JobSeq, Partition) order within its own class. It
// fails if the class is invalid, the partition index is negative, or the
// same (JobSeq, Partition) is already queued.
func (q *Queue[T]) Push(item Item[T]) error {
	return q.insert(item, "push")
}

// Requeue puts back a partition that was popped but could not finish (its
// backend crashed, its budget wait was cancelled). Because the place is
// decided by (Class, JobSeq, Partition), a retried partition goes back ahead
// of every later job of its class instead of to the tail. The caller must
// not requeue a partition of a job it has cancelled: Remove only drops what
// is queued at the time.
func (q *Queue[T]) Requeue(item Item[T]) error {
	return q.insert(item, "requeue")
}

func (q *Queue[T]) insert(item Item[T], op string) error {
	if !item.Class.Specified() {
		return fmt.Errorf("queue %s job %d partition %d: invalid priority class %d", op, item.JobSeq, item.Partition, int(item.Class))
	}
	if item.Partition < 0 {
		return fmt.Errorf("queue %s job %d: negative partition index %d", op, item.JobSeq, item.Partition)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	k := item.key()
	if c, ok := q.queued[k]; ok {
		return fmt.Errorf("queue %s job %d partition %d (class %s): %w in class %s", op, item.JobSeq, item.Partition, item.Class, ErrDuplicate, c)
	}
	items := q.byClass[item.Class.Index()]
	// No equal key can exist (checked above), so found is always false.
	at, _ := slices.BinarySearchFunc(items, item, compareItems[T])
	q.byClass[item.Class.Index()] = slices.Insert(items, at, item)
	q.queued[k] = item.Class
	if op == "requeue" {
		q.requeued++
	}
	if q.changed != nil {
		close(q.changed)
		q.changed = nil
	}
	return nil
}

// Pop removes and returns the next item: the first of the most urgent class
// that has work. It blocks until an item is available or ctx is done, in
// which case it returns ctx's error and takes nothing. Any number of
// consumers may call it concurrently; each item goes to exactly one.
func (q *Queue[T]) Pop(ctx context.Context) (Item[T], error) {
	return q.pop(ctx, func(q *Queue[T]) (int, int) { return q.firstLocked() })
}

// PopClass is Pop restricted to one class: it returns the first item of
// class c and ignores the others. A dispatcher per class uses it so that a
// Normal partition blocked waiting for budget never holds back a Critical
// one behind it; the budget then decides, by class, who gets memory first.
func (q *Queue[T]) PopClass(ctx context.Context, c api.Class) (Item[T], error) {
	if !c.Specified() {
		var zero Item[T]
		return zero, fmt.Errorf("queue pop: invalid priority class %d", int(c))
	}
	return q.pop(ctx, func(q *Queue[T]) (int, int) {
		if len(q.byClass[c.Index()]) == 0 {
			return -1, -1
		}
		return c.Index(), 0
	})
}

// PopIf removes and returns the first item, in dispatch order, for which
// match returns true, blocking until there is one or ctx is done. It lets a
// consumer that can serve only some partitions (one circuit, one curve) skip
// the others, which gives up strict order for the items it skips. match is
// called with the queue locked: it must be fast, must not call the queue,
// and must depend only on the item, since the queue re-checks only when an
// item is added.
func (q *Queue[T]) PopIf(ctx context.Context, match func(Item[T]) bool) (Item[T], error) {
	if match == nil {
		var zero Item[T]
		return zero, errors.New("queue pop: nil match function")
	}
	return q.pop(ctx, func(q *Queue[T]) (int, int) {
		for ci := range q.byClass {
			for i := range q.byClass[ci] {
				if match(q.byClass[ci][i]) {
					return ci, i
				}
			}
		}
		return -1, -1
	})
}

// TryPop is Pop without waiting: it returns the next item and true, or the
// zero item and false when the queue is empty.
func (q *Queue[T]) TryPop() (Item[T], bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ci, i := q.firstLocked()
	if ci < 0 {
		var zero Item[T]
		return zero, false
	}
	return q.takeLocked(ci, i), true
}

// firstLocked locates the next item in dispatch order, or (-1, -1).
func (q *Queue[T]) firstLocked() (int, int) {
	for ci := range q.byClass {
		if len(q.byClass[ci]) > 0 {
			return ci, 0
		}
	}
	return -1, -1
}

// pop waits until find locates an item, then removes and returns it.
func (q *Queue[T]) pop(ctx context.Context, find func(*Queue[T]) (int, int)) (Item[T], error) {
	var zero Item[T]
	for {
		// Checked before looking, so a cancelled consumer never takes an
		// item it would then drop.
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		q.mu.Lock()
		if ci, i := find(q); ci >= 0 {
			item := q.takeLocked(ci, i)
			q.mu.Unlock()
			return item, nil
		}
		// Take the channel under the lock: an insert after this point closes
		// it, so the wake-up cannot be lost between Unlock and select.
		if q.changed == nil {
			q.changed = make(chan struct{})
		}
		changed := q.changed
		q.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

func (q *Queue[T]) takeLocked(ci, i int) Item[T] {
	item := q.byClass[ci][i]
	q.byClass[ci] = slices.Delete(q.byClass[ci], i, i+1)
	delete(q.queued, item.key())
	return item
}

// Remove drops every queued partition of job jobSeq (the job was cancelled
// or failed) and returns them in partition order, so the caller can release
// what they held. Partitions already popped are not affected.
func (q *Queue[T]) Remove(jobSeq uint64) []Item[T] {
	q.mu.Lock()
	defer q.mu.Unlock()
	var removed []Item[T]
	for ci := range q.byClass {
		kept := q.byClass[ci][:0]
		for _, it := range q.byClass[ci] {
			if it.JobSeq == jobSeq {
				removed = append(removed, it)
				delete(q.queued, it.key())
			} else {
				kept = append(kept, it)
			}
		}
		clear(q.byClass[ci][len(kept):]) // drop references to removed payloads
		q.byClass[ci] = kept
	}
	// A job has one class, but should it ever be queued under two, keep the
	// result in partition order anyway.
	slices.SortFunc(removed, compareItems[T])
	return removed
}

// Len returns the number of queued items across all classes.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queued)
}

// ClassLen returns the number of queued items of class c (0 for an invalid class).
func (q *Queue[T]) ClassLen(c api.Class) int {
	if !c.Specified() {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.byClass[c.Index()])
}

// Requeued returns how many items were put back with Requeue since New; a
// rising count means partitions keep failing after dispatch.
func (q *Queue[T]) Requeued() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.requeued
}

// Snapshot returns a copy of every queued item in dispatch order (the order
// Pop would return them if nothing were added), for status reports. Values
// are copied shallowly.
func (q *Queue[T]) Snapshot() []Item[T] {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Item[T], 0, len(q.queued))
	for ci := range q.byClass {
		out = append(out, q.byClass[ci]...)
	}
	return out
}
