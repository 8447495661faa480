package budget

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// ErrTooLarge is returned (wrapped, with the numbers) by Reserve and
// TryReserve when a request exceeds what its class could ever hold, even
// with the whole ledger free. Waiting would never help, so the request is
// refused at once.
var ErrTooLarge = errors.New("request larger than the class may ever use")

// ErrWouldBlock is returned (wrapped) by TryReserve when the bytes are not
// free now, or when an earlier request of the same or a more urgent class is
// already waiting (taking the bytes would jump ahead of it).
var ErrWouldBlock = errors.New("reservation would block")

// Ledger is the host's single memory budget, in bytes. Every byte the host
// commits is reserved here before it is allocated. The zero value is not
// usable; call New. All methods are safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	total   uint64
	reserve uint64 // held back for Critical: other classes may use total-reserve
	used    uint64
	usedBy  [api.NumClasses]uint64
	// waiters holds each class's blocked requests in arrival order
	// (*waiter), indexed by Class.Index().
	waiters [api.NumClasses]list.List
	held    map[*Reservation]struct{}
	grants  [api.NumClasses]uint64
	waited  [api.NumClasses]time.Duration
}

// waiter is one blocked Reserve call. Its fields are guarded by Ledger.mu.
type waiter struct {
	class api.Class
	bytes uint64
	owner string
	since time.Time
	ready chan struct{} // closed when granted
	res   *Reservation  // set when granted
	elem  *list.Element
}

// Reservation is bytes granted by a Ledger to one owner. It is released in
// steps (Release) or at once (ReleaseAll); the usual pattern is to release
// the synthesized data after upload, then `defer r.ReleaseAll()` for the
// rest after finalize. All methods are safe for concurrent use, and on a nil
// Reservation.
type Reservation struct {
	ledger *Ledger
	class  api.Class
	owner  string
	held   uint64 // guarded by ledger.mu
}

// New returns a ledger of total bytes of which criticalReserve are held back
// for the Critical class: High, Normal and Low may together use at most
// total-criticalReserve, while Critical may use everything. A reserve larger
// than total is clamped to total (only Critical can then reserve anything);
// configuration should reject that before it gets here.
func New(total, criticalReserve uint64) *Ledger {
	l := &Ledger{total: total, reserve: min(criticalReserve, total), held: make(map[*Reservation]struct{})}
	for i := range l.waiters {
		l.waiters[i].Init()
	}
	return l
}

// Limit returns the most bytes class c may have in use together with the
// other classes: total for Critical, total minus the critical reserve for
// the rest, 0 for an invalid class.
func (l *Ledger) Limit(c api.Class) uint64 {
	switch {
	case c == api.ClassCritical:
		return l.total
	case c.Specified():
		return l.total - l.reserve
	default:
		return 0
	}
}

// Fits reports whether a request of bytes for class c could ever be
// granted, that is whether Reserve would wait for it rather than refuse it.
// Admission at submit uses it to reject a job that can never run. It is
// false for zero bytes and for an invalid class, which Reserve refuses too.
func (l *Ledger) Fits(c api.Class, bytes uint64) bool {
	return l.check(c, bytes, "") == nil
}

// check validates a request; total and reserve never change, so no lock.
func (l *Ledger) check(c api.Class, bytes uint64, owner string) error {
	if !c.Specified() {
		return fmt.Errorf("budget: %s: invalid priority class %d", ownerName(owner), int(c))
	}
	if bytes == 0 {
		return fmt.Errorf("budget: %s (class %s): reservation of 0 bytes", ownerName(owner), c)
	}
	if limit := l.Limit(c); bytes > limit {
		return fmt.Errorf("budget: %s needs %s, class %s can use at most %s of %s: %w",
			ownerName(owner), FormatBytes(bytes), c, FormatBytes(limit), FormatBytes(l.total), ErrTooLarge)
	}
	return nil
}

func ownerName(owner string) string {
	if owner == "" {
		return "request"
	}
	return owner
}

// Reserve blocks until bytes can be granted to class c, then returns the
// reservation. Requests are granted in class order (Critical, High, Normal,
// Low) and first come, first served within a class; a request never takes
// bytes ahead of an earlier request of its own or a more urgent class, even
// when it is small enough to fit now, so big partitions are not starved by
// small ones. Classes other than Critical may not dip into the critical
// reserve. owner names the holder in errors and in Holdings.
//
// If ctx ends first, Reserve returns an error wrapping ctx's error and holds
// nothing; waiters behind it are re-examined at once. A request larger than
// the class's Limit fails at once with ErrTooLarge.
func (l *Ledger) Reserve(ctx context.Context, c api.Class, bytes uint64, owner string) (*Reservation, error) {
	if err := l.check(c, bytes, owner); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("budget: %s (class %s) reserving %s: %w", ownerName(owner), c, FormatBytes(bytes), err)
	}
	l.mu.Lock()
	if l.mayGrantLocked(c, bytes) {
		r := l.grantLocked(c, bytes, owner)
		l.mu.Unlock()
		return r, nil
	}
	w := &waiter{class: c, bytes: bytes, owner: owner, since: time.Now(), ready: make(chan struct{})}
	w.elem = l.waiters[c.Index()].PushBack(w)
	l.mu.Unlock()

	select {
	case <-w.ready:
		// w.res was written under l.mu before ready was closed; the close
		// orders it before this read.
		return w.res, nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	if w.res != nil {
		// Granted while ctx ended: give the bytes back rather than hand
		// out a reservation the caller has stopped waiting for.
		l.releaseLocked(w.res, w.res.held)
	} else {
		l.waiters[c.Index()].Remove(w.elem)
		// This waiter may have been the blocked head that held back others.
		l.wakeLocked()
	}
	l.mu.Unlock()
	return nil, fmt.Errorf("budget: %s (class %s) waiting for %s: %w", ownerName(owner), c, FormatBytes(bytes), ctx.Err())
}

// TryReserve is Reserve without waiting: it grants the bytes now or fails
// with ErrWouldBlock (not free, or an earlier request of the same or a more
// urgent class is waiting) or ErrTooLarge.
func (l *Ledger) TryReserve(c api.Class, bytes uint64, owner string) (*Reservation, error) {
	if err := l.check(c, bytes, owner); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mayGrantLocked(c, bytes) {
		return nil, fmt.Errorf("budget: %s (class %s) needs %s, %s in use of %s: %w",
			ownerName(owner), c, FormatBytes(bytes), FormatBytes(l.used), FormatBytes(l.total), ErrWouldBlock)
	}
	return l.grantLocked(c, bytes, owner), nil
}

// mayGrantLocked reports whether a new request may be granted right now: no
// request of its own or a more urgent class waits ahead of it, and it fits.
func (l *Ledger) mayGrantLocked(c api.Class, bytes uint64) bool {
	for i := 0; i <= c.Index(); i++ {
		if l.waiters[i].Len() > 0 {
			return false
		}
	}
	return l.fitsNowLocked(c, bytes)
}

// fitsNowLocked reports whether bytes fit in what class c may use now.
func (l *Ledger) fitsNowLocked(c api.Class, bytes uint64) bool {
	limit := l.Limit(c)
	return l.used <= limit && bytes <= limit-l.used
}

func (l *Ledger) grantLocked(c api.Class, bytes uint64, owner string) *Reservation {
	r := &Reservation{ledger: l, class: c, owner: owner, held: bytes}
	l.used += bytes
	l.usedBy[c.Index()] += bytes
	l.grants[c.Index()]++
	l.held[r] = struct{}{}
	return r
}

// wakeLocked grants waiting requests in order: classes from Critical to Low,
// each class's waiters first come, first served. It stops at the first
// waiter that does not fit: nothing behind it, in its class or a less urgent
// one, may take bytes ahead of it. Every change that can free room (a
// release, a cancelled waiter) calls it, so no wake-up is lost. A new
// request never needs it: it is granted on arrival or queued behind a head
// that is already blocked.
func (l *Ledger) wakeLocked() {
	now := time.Now()
	for ci := range l.waiters {
		q := &l.waiters[ci]
		for e := q.Front(); e != nil; e = q.Front() {
			w := e.Value.(*waiter)
			if !l.fitsNowLocked(w.class, w.bytes) {
				return
			}
			q.Remove(e)
			w.res = l.grantLocked(w.class, w.bytes, w.owner)
			l.waited[ci] += now.Sub(w.since)
			close(w.ready)
		}
	}
}

// releaseLocked returns bytes (at most r.held) to the ledger and wakes waiters.
func (l *Ledger) releaseLocked(r *Reservation, bytes uint64) {
	if bytes == 0 {
		return
	}
	r.held -= bytes
	l.used -= bytes
	l.usedBy[r.class.Index()] -= bytes
	if r.held == 0 {
		delete(l.held, r)
	}
	l.wakeLocked()
}

// Release returns bytes of the reservation to the ledger, keeping the rest:
// the first step of a two-step release (the synthesized data is freed after
// upload, the rest after finalize). Releasing 0 bytes does nothing.
// Releasing more than is held is an error and releases nothing, so the
// ledger never goes below zero; a later ReleaseAll still frees what is held.
func (r *Reservation) Release(bytes uint64) error {
	if r == nil {
		return errors.New("budget: release on a nil reservation")
	}
	l := r.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes > r.held {
		return fmt.Errorf("budget: %s (class %s) releasing %s but holds %s",
			ownerName(r.owner), r.class, FormatBytes(bytes), FormatBytes(r.held))
	}
	l.releaseLocked(r, bytes)
	return nil
}

// ReleaseAll returns everything the reservation still holds and reports how
// many bytes that was. It is idempotent: later calls return 0.
func (r *Reservation) ReleaseAll() uint64 {
	if r == nil {
		return 0
	}
	l := r.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	n := r.held
	l.releaseLocked(r, n)
	return n
}

// Held returns the bytes the reservation still holds.
func (r *Reservation) Held() uint64 {
	if r == nil {
		return 0
	}
	r.ledger.mu.Lock()
	defer r.ledger.mu.Unlock()
	return r.held
}

// Owner returns the owner named at Reserve.
func (r *Reservation) Owner() string {
	if r == nil {
		return ""
	}
	return r.owner
}

// Class returns the class the reservation was granted to.
func (r *Reservation) Class() api.Class {
	if r == nil {
		return 0
	}
	return r.class
}

// Stats is a consistent snapshot of a ledger.
type Stats struct {
	// Total is the ledger's size in bytes.
	Total uint64
	// CriticalReserve is the part of Total only Critical may use.
	CriticalReserve uint64
	// Used is the bytes granted and not yet released, all classes together.
	Used uint64
	// Reservations is the number of reservations holding bytes.
	Reservations int
	// Classes has one entry per class, Critical first.
	Classes []ClassStats
}

// ClassStats describes one class in a Stats snapshot.
type ClassStats struct {
	// Class is the class described.
	Class api.Class
	// Limit is the most bytes the class may have in use with the others.
	Limit uint64
	// Available is what a request of this class could get right now if
	// nothing waited ahead of it: Limit minus Used, or 0.
	Available uint64
	// Used is the bytes held by this class's reservations.
	Used uint64
	// Waiters is the number of blocked Reserve calls of this class.
	Waiters int
	// WaitingBytes is the bytes those waiters ask for together.
	WaitingBytes uint64
	// Grants is the number of reservations granted since New.
	Grants uint64
	// WaitTime is the total time requests spent waiting before they were
	// granted, since New (waits that ended in cancellation are not counted).
	WaitTime time.Duration
}

// Stats returns a snapshot of the ledger.
func (l *Ledger) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Stats{Total: l.total, CriticalReserve: l.reserve, Used: l.used, Reservations: len(l.held)}
	for _, c := range api.Classes {
		i := c.Index()
		cs := ClassStats{Class: c, Limit: l.Limit(c), Used: l.usedBy[i], Waiters: l.waiters[i].Len(), Grants: l.grants[i], WaitTime: l.waited[i]}
		if cs.Limit > l.used {
			cs.Available = cs.Limit - l.used
		}
		for e := l.waiters[i].Front(); e != nil; e = e.Next() {
			cs.WaitingBytes += e.Value.(*waiter).bytes
		}
		s.Classes = append(s.Classes, cs)
	}
	return s
}

// Class returns the entry of s for class c (the zero ClassStats for an
// invalid class).
func (s Stats) Class(c api.Class) ClassStats {
	for _, cs := range s.Classes {
		if cs.Class == c {
			return cs
		}
	}
	return ClassStats{}
}

// Holding is one live reservation in a Holdings report.
type Holding struct {
	// Owner is the name given at Reserve.
	Owner string
	// Class is the reservation's class.
	Class api.Class
	// Bytes is what it still holds.
	Bytes uint64
}

// Holdings lists the reservations that hold bytes, largest first (then by
// owner), so a status report can say who has the memory.
func (l *Ledger) Holdings() []Holding {
	l.mu.Lock()
	out := make([]Holding, 0, len(l.held))
	for r := range l.held {
		out = append(out, Holding{Owner: r.owner, Class: r.class, Bytes: r.held})
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b Holding) int {
		if a.Bytes != b.Bytes {
			if a.Bytes > b.Bytes {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Owner, b.Owner)
	})
	return out
}

// FormatBytes writes n exactly, with api.FormatBytes's binary-unit approximation
// when it is at least 1 KiB: "17179869184 B (16.0 GiB)". Errors use it so the
// numbers can be checked and read.
func FormatBytes(n uint64) string {
	if n < 1024 {
		return api.FormatBytes(n) // exact already
	}
	return fmt.Sprintf("%d B (%s)", n, api.FormatBytes(n))
}
