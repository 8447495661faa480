package budget

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

const (
	critical = api.ClassCritical
	high     = api.ClassHigh
	normal   = api.ClassNormal
	low      = api.ClassLow
)

// checkInvariants inspects the ledger under its lock. Beyond the byte
// counts, it checks the no-lost-wake-up invariant: when anyone waits, the
// first waiter in grant order does not fit (otherwise it should have been
// granted).
func checkInvariants(l *Ledger) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum, nonCritical uint64
	for _, c := range api.Classes {
		sum += l.usedBy[c.Index()]
		if c != critical {
			nonCritical += l.usedBy[c.Index()]
		}
	}
	var held uint64
	for r := range l.held {
		if r.held == 0 {
			return fmt.Errorf("reservation of %s holds 0 bytes but is listed", r.owner)
		}
		held += r.held
	}
	switch {
	case l.used > l.total:
		return fmt.Errorf("used %d > total %d", l.used, l.total)
	case sum != l.used:
		return fmt.Errorf("per-class used sums to %d, used is %d", sum, l.used)
	case held != l.used:
		return fmt.Errorf("reservations hold %d, used is %d", held, l.used)
	case nonCritical > l.total-l.reserve:
		return fmt.Errorf("non-critical classes use %d > %d (reserve %d)", nonCritical, l.total-l.reserve, l.reserve)
	}
	for ci := range l.waiters {
		if e := l.waiters[ci].Front(); e != nil {
			w := e.Value.(*waiter)
			if l.fitsNowLocked(w.class, w.bytes) {
				return fmt.Errorf("lost wake-up: %s (class %s, %d bytes) fits (used %d) but waits", w.owner, w.class, w.bytes, l.used)
			}
			break
		}
	}
	return nil
}

func mustInvariants(t *testing.T, l *Ledger) {
	t.Helper()
	if err := checkInvariants(l); err != nil {
		t.Fatal(err)
	}
}

func mustTry(t *testing.T, l *Ledger, c api.Class, bytes uint64, owner string) *Reservation {
	t.Helper()
	r, err := l.TryReserve(c, bytes, owner)
	if err != nil {
		t.Fatalf("TryReserve(%s, %d, %s): %v", c, bytes, owner, err)
	}
	return r
}

// waitWaiters blocks until class c has n waiters.
func waitWaiters(t *testing.T, l *Ledger, c api.Class, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.Stats().Class(c).Waiters != n {
		if time.Now().After(deadline) {
			t.Fatalf("class %s: %d waiters, want %d", c, l.Stats().Class(c).Waiters, n)
		}
		time.Sleep(time.Millisecond)
	}
}

type result struct {
	name string
	r    *Reservation
	err  error
}

// reserveAsync starts a Reserve and reports its result on out.
func reserveAsync(ctx context.Context, l *Ledger, c api.Class, bytes uint64, name string, out chan<- result) {
	go func() {
		r, err := l.Reserve(ctx, c, bytes, name)
		out <- result{name, r, err}
	}()
}

func recv(t *testing.T, out <-chan result) result {
	t.Helper()
	select {
	case res := <-out:
		return res
	case <-time.After(5 * time.Second):
		t.Fatal("no Reserve returned within 5s")
		return result{}
	}
}

func expectNone(t *testing.T, out <-chan result) {
	t.Helper()
	select {
	case res := <-out:
		t.Fatalf("%s returned (err %v) but should still wait", res.name, res.err)
	case <-time.After(20 * time.Millisecond):
	}
}

func TestLimitsAndFits(t *testing.T) {
	tests := []struct {
		name           string
		total, reserve uint64
		criticalLimit  uint64
		otherLimit     uint64
	}{
		{"no reserve", 100, 0, 100, 100},
		{"reserve", 100, 30, 100, 70},
		{"reserve is everything", 100, 100, 100, 0},
		{"reserve clamped to total", 100, 500, 100, 0},
		{"empty ledger", 0, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := New(tc.total, tc.reserve)
			if got := l.Limit(critical); got != tc.criticalLimit {
				t.Errorf("Limit(critical) = %d, want %d", got, tc.criticalLimit)
			}
			for _, c := range []api.Class{high, normal, low} {
				if got := l.Limit(c); got != tc.otherLimit {
					t.Errorf("Limit(%s) = %d, want %d", c, got, tc.otherLimit)
				}
				if l.Fits(c, tc.otherLimit+1) {
					t.Errorf("Fits(%s, %d) = true", c, tc.otherLimit+1)
				}
				if got := l.Fits(c, tc.otherLimit); got != (tc.otherLimit > 0) {
					t.Errorf("Fits(%s, %d) = %v", c, tc.otherLimit, got)
				}
			}
			if l.Fits(critical, tc.criticalLimit+1) {
				t.Errorf("Fits(critical, %d) = true", tc.criticalLimit+1)
			}
			if l.Limit(0) != 0 || l.Fits(0, 1) || l.Fits(normal, 0) {
				t.Error("invalid class or zero bytes accepted")
			}
		})
	}
}

func TestRejects(t *testing.T) {
	l := New(100, 20)
	tests := []struct {
		name    string
		class   api.Class
		bytes   uint64
		tooBig  bool
		message string
	}{
		{"normal over its limit", normal, 81, true, "job-1 needs 81 B, class normal can use at most 80 B of 100 B"},
		{"critical over total", critical, 101, true, "job-1 needs 101 B, class critical can use at most 100 B of 100 B"},
		{"zero bytes", normal, 0, false, "reservation of 0 bytes"},
		{"zero class", 0, 10, false, "invalid priority class 0"},
		{"class past low", low + 1, 10, false, "invalid priority class 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err1 := l.Reserve(context.Background(), tc.class, tc.bytes, "job-1")
			_, err2 := l.TryReserve(tc.class, tc.bytes, "job-1")
			for _, err := range []error{err1, err2} {
				if err == nil {
					t.Fatal("accepted")
				}
				if errors.Is(err, ErrTooLarge) != tc.tooBig {
					t.Errorf("errors.Is(%v, ErrTooLarge) = %v", err, !tc.tooBig)
				}
				if !strings.Contains(err.Error(), tc.message) {
					t.Errorf("error %q does not say %q", err, tc.message)
				}
			}
		})
	}
	if s := l.Stats(); s.Used != 0 || s.Reservations != 0 {
		t.Fatalf("rejected requests left %+v", s)
	}
}

func TestTwoStepRelease(t *testing.T) {
	l := New(1000, 0)
	r := mustTry(t, l, normal, 600, "job-1/p0")
	if err := r.Release(400); err != nil { // synthesized data, after upload
		t.Fatal(err)
	}
	if r.Held() != 200 || l.Stats().Used != 200 {
		t.Fatalf("after first step: held %d, used %d", r.Held(), l.Stats().Used)
	}
	if err := r.Release(201); err == nil || !strings.Contains(err.Error(), "releasing 201 B but holds 200 B") {
		t.Fatalf("over-release: %v", err)
	}
	if err := r.Release(0); err != nil {
		t.Fatalf("Release(0): %v", err)
	}
	if r.Held() != 200 || l.Stats().Used != 200 {
		t.Fatal("failed release changed the ledger")
	}
	if got := l.Holdings(); len(got) != 1 || got[0] != (Holding{"job-1/p0", normal, 200}) {
		t.Fatalf("Holdings = %+v", got)
	}
	if n := r.ReleaseAll(); n != 200 { // the rest, after finalize
		t.Fatalf("ReleaseAll = %d, want 200", n)
	}
	if n := r.ReleaseAll(); n != 0 {
		t.Fatalf("second ReleaseAll = %d", n)
	}
	if err := r.Release(1); err == nil {
		t.Fatal("Release after ReleaseAll succeeded")
	}
	s := l.Stats()
	if s.Used != 0 || s.Reservations != 0 || len(l.Holdings()) != 0 {
		t.Fatalf("after release: %+v", s)
	}
	if r.Owner() != "job-1/p0" || r.Class() != normal {
		t.Fatal("wrong owner or class")
	}
	var nilRes *Reservation
	if nilRes.Release(1) == nil || nilRes.ReleaseAll() != 0 || nilRes.Held() != 0 || nilRes.Owner() != "" || nilRes.Class() != 0 {
		t.Fatal("nil reservation misbehaves")
	}
	mustInvariants(t, l)
}

func TestCriticalReserve(t *testing.T) {
	l := New(100, 30)
	n := mustTry(t, l, normal, 60, "batch-1")
	mustTry(t, l, high, 10, "batch-2")
	// Non-critical classes are at their limit (70): the reserve is off-limits.
	for _, c := range []api.Class{high, normal, low} {
		if _, err := l.TryReserve(c, 1, "more"); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("class %s took from the reserve: %v", c, err)
		}
	}
	out := make(chan result, 4)
	reserveAsync(context.Background(), l, normal, 10, "waiting-normal", out)
	waitWaiters(t, l, normal, 1)
	// Critical is more urgent than the waiting Normal and fits in the reserve.
	c1 := mustTry(t, l, critical, 30, "deadline")
	if _, err := l.TryReserve(critical, 1, "deadline-2"); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("over total: %v", err)
	}
	// Freeing the reserve does not help Normal: 70 are still in use by others.
	c1.ReleaseAll()
	expectNone(t, out)
	mustInvariants(t, l)
	if err := n.Release(10); err != nil {
		t.Fatal(err)
	}
	if res := recv(t, out); res.err != nil || res.name != "waiting-normal" {
		t.Fatalf("got %s, %v", res.name, res.err)
	}
	st := l.Stats()
	if st.Class(normal).Used != 60 || st.Class(high).Used != 10 || st.Class(critical).Used != 0 || st.Used != 70 {
		t.Fatalf("per-class use: %+v", st)
	}
	mustInvariants(t, l)
}

// TestWakeOrder releases room for one waiter at a time and checks who gets
// it: classes in priority order, FIFO within a class.
func TestWakeOrder(t *testing.T) {
	l := New(100, 0)
	all := mustTry(t, l, critical, 100, "filler")
	arrivals := []struct {
		class api.Class
		name  string
	}{
		{low, "low-1"}, {normal, "normal-1"}, {high, "high-1"}, {critical, "critical-1"},
		{normal, "normal-2"}, {high, "high-2"}, {low, "low-2"}, {critical, "critical-2"},
	}
	out := make(chan result, len(arrivals))
	queued := map[api.Class]int{}
	for _, a := range arrivals {
		reserveAsync(context.Background(), l, a.class, 10, a.name, out)
		queued[a.class]++
		waitWaiters(t, l, a.class, queued[a.class]) // fixes the arrival order
	}
	if got := l.Stats().Class(normal).WaitingBytes; got != 20 {
		t.Fatalf("normal WaitingBytes = %d", got)
	}
	want := []string{"critical-1", "critical-2", "high-1", "high-2", "normal-1", "normal-2", "low-1", "low-2"}
	var got []string
	for range want {
		if err := all.Release(10); err != nil {
			t.Fatal(err)
		}
		res := recv(t, out)
		if res.err != nil {
			t.Fatal(res.err)
		}
		got = append(got, res.name)
		expectNone(t, out) // exactly one fits per release
		mustInvariants(t, l)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("wake order %v, want %v", got, want)
	}
	for _, c := range api.Classes {
		if cs := l.Stats().Class(c); cs.Waiters != 0 || cs.Grants == 0 || cs.WaitTime <= 0 {
			t.Fatalf("class %s stats %+v", c, cs)
		}
	}
}

// TestNoBarging: a small request that fits now still waits behind an
// earlier, larger request of its own or a more urgent class.
func TestNoBarging(t *testing.T) {
	l := New(100, 0)
	base := mustTry(t, l, normal, 90, "base")
	out := make(chan result, 4)
	reserveAsync(context.Background(), l, normal, 50, "big-normal", out)
	waitWaiters(t, l, normal, 1)

	for _, c := range []api.Class{normal, low} {
		if _, err := l.TryReserve(c, 5, "small"); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("small %s request barged: %v", c, err)
		}
	}
	// High is ahead of the waiting Normal, so it may take the free bytes.
	h := mustTry(t, l, high, 5, "small-high")
	reserveAsync(context.Background(), l, low, 5, "small-low", out)
	waitWaiters(t, l, low, 1)

	h.ReleaseAll()
	expectNone(t, out) // 10 free: small-low fits but big-normal is first
	mustInvariants(t, l)
	if err := base.Release(40); err != nil {
		t.Fatal(err)
	}
	if res := recv(t, out); res.name != "big-normal" || res.err != nil {
		t.Fatalf("got %s, %v", res.name, res.err)
	}
	expectNone(t, out) // full again
	base.ReleaseAll()
	if res := recv(t, out); res.name != "small-low" || res.err != nil {
		t.Fatalf("got %s, %v", res.name, res.err)
	}
	mustInvariants(t, l)
}

// TestCriticalHeadBlocksOthers: while a Critical request waits, no other
// class takes bytes, even bytes Critical cannot use yet.
func TestCriticalHeadBlocksOthers(t *testing.T) {
	l := New(100, 20)
	n := mustTry(t, l, normal, 60, "batch")
	out := make(chan result, 2)
	reserveAsync(context.Background(), l, critical, 50, "deadline", out)
	waitWaiters(t, l, critical, 1)
	if _, err := l.TryReserve(low, 5, "small"); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("low barged past waiting critical: %v", err)
	}
	if err := n.Release(10); err != nil {
		t.Fatal(err)
	}
	if res := recv(t, out); res.name != "deadline" || res.err != nil {
		t.Fatalf("got %s, %v", res.name, res.err)
	}
	mustInvariants(t, l)
}

func TestCancel(t *testing.T) {
	t.Run("waiter leaves and its error says why", func(t *testing.T) {
		l := New(100, 0)
		mustTry(t, l, normal, 100, "full")
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan result, 1)
		reserveAsync(ctx, l, normal, 10, "impatient", out)
		waitWaiters(t, l, normal, 1)
		cancel()
		res := recv(t, out)
		if !errors.Is(res.err, context.Canceled) || res.r != nil || !strings.Contains(res.err.Error(), "impatient") {
			t.Fatalf("got %v, %v", res.r, res.err)
		}
		if s := l.Stats(); s.Class(normal).Waiters != 0 || s.Used != 100 {
			t.Fatalf("after cancel: %+v", s)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		l := New(100, 0)
		mustTry(t, l, normal, 100, "full")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := l.Reserve(ctx, high, 1, "late"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
		mustInvariants(t, l)
	})
	t.Run("cancelled head lets the next one in", func(t *testing.T) {
		l := New(100, 0)
		mustTry(t, l, normal, 60, "base")
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan result, 2)
		reserveAsync(ctx, l, normal, 50, "big", out)
		waitWaiters(t, l, normal, 1)
		reserveAsync(context.Background(), l, low, 30, "small", out)
		waitWaiters(t, l, low, 1)
		expectNone(t, out)
		cancel()
		got := map[string]error{}
		for range 2 {
			res := recv(t, out)
			got[res.name] = res.err
		}
		if !errors.Is(got["big"], context.Canceled) || got["small"] != nil {
			t.Fatalf("results %v", got)
		}
		mustInvariants(t, l)
	})
	t.Run("cancelled before the call takes nothing", func(t *testing.T) {
		l := New(100, 0)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if r, err := l.Reserve(ctx, normal, 10, "x"); r != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, %v", r, err)
		}
		if l.Stats().Used != 0 {
			t.Fatal("bytes reserved")
		}
	})
}

// TestStress runs many goroutines reserving and releasing random sizes
// across classes, some with short deadlines, while a checker verifies the
// invariants. A lost wake-up shows as a Reserve that never returns: the
// watchdog fails the test instead of hanging.
func TestStress(t *testing.T) {
	const total, reserve = 1 << 20, 1 << 18
	duration := 1500 * time.Millisecond
	if testing.Short() {
		duration = 200 * time.Millisecond
	}
	l := New(total, reserve)
	stop := make(chan struct{})
	var workers sync.WaitGroup
	var grants, cancels atomic.Int64
	for g := range 16 {
		workers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := api.Classes[rng.IntN(api.NumClasses)]
				limit := l.Limit(c)
				bytes := 1 + rng.Uint64N(limit/3)
				if rng.IntN(20) == 0 {
					bytes = limit // occasionally the whole class limit
				}
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if rng.IntN(4) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(500))*time.Microsecond)
				}
				r, err := l.Reserve(ctx, c, bytes, fmt.Sprintf("g%d", g))
				cancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Reserve: %v", err)
						return
					}
					cancels.Add(1)
					continue
				}
				grants.Add(1)
				if got := r.Held(); got != bytes {
					t.Errorf("granted %d, asked %d", got, bytes)
				}
				time.Sleep(time.Duration(rng.IntN(100)) * time.Microsecond)
				if err := r.Release(rng.Uint64N(bytes + 1)); err != nil {
					t.Errorf("first-step release: %v", err)
				}
				if rng.IntN(2) == 0 {
					time.Sleep(time.Duration(rng.IntN(50)) * time.Microsecond)
				}
				r.ReleaseAll()
			}
		})
	}
	var checker sync.WaitGroup
	checker.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := checkInvariants(l); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(50 * time.Microsecond)
		}
	})
	time.Sleep(duration)
	close(stop)
	done := make(chan struct{})
	go func() { workers.Wait(); checker.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("workers stuck in Reserve (lost wake-up?): %+v", l.Stats())
	}
	mustInvariants(t, l)
	s := l.Stats()
	if s.Used != 0 || s.Reservations != 0 {
		t.Fatalf("leftover after all released: %+v", s)
	}
	for _, cs := range s.Classes {
		if cs.Waiters != 0 || cs.Grants == 0 {
			t.Fatalf("class %s: %+v", cs.Class, cs)
		}
	}
	t.Logf("%d grants, %d timed out waits", grants.Load(), cancels.Load())
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		n    uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1024 B (1.0 KiB)"},
		{3 << 29, "1610612736 B (1.5 GiB)"},
		{16 << 30, "17179869184 B (16.0 GiB)"},
		{1<<64 - 1, "18446744073709551615 B (16.0 EiB)"},
	}
	for _, tc := range tests {
		if got := FormatBytes(tc.n); got != tc.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// BenchmarkReserveRelease is the uncontended cost of one grant and release.
func BenchmarkReserveRelease(b *testing.B) {
	l := New(1<<30, 1<<28)
	ctx := context.Background()
	for b.Loop() {
		r, err := l.Reserve(ctx, normal, 1<<20, "bench")
		if err != nil {
			b.Fatal(err)
		}
		r.ReleaseAll()
	}
}

// BenchmarkReserveReleaseContended has goroutines of every class compete
// for a ledger that fits only a few requests at once, so most calls wait
// and are woken by a release.
func BenchmarkReserveReleaseContended(b *testing.B) {
	l := New(8<<20, 2<<20)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		g := next.Add(1)
		c := api.Classes[g%api.NumClasses]
		bytes := uint64(1+g%3) << 20
		for pb.Next() {
			r, err := l.Reserve(ctx, c, bytes, "bench")
			if err != nil {
				b.Error(err)
				return
			}
			runtime.Gosched() // hold it while others run, so they must wait
			if err := r.Release(bytes / 2); err != nil {
				b.Error(err)
			}
			r.ReleaseAll()
		}
	})
}
