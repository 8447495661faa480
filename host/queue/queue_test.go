package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// The classes, short for the tables below.
const (
	Critical = api.ClassCritical
	High     = api.ClassHigh
	Normal   = api.ClassNormal
	Low      = api.ClassLow
)

// id is a compact description of an item for comparisons in tests.
type id struct {
	c api.Class
	j uint64
	p int
}

func (i id) String() string { return fmt.Sprintf("%s/%d/%d", i.c, i.j, i.p) }

func idOf(it Item[string]) id { return id{it.Class, it.JobSeq, it.Partition} }

func mustPush(t *testing.T, q *Queue[string], c api.Class, j uint64, p int) {
	t.Helper()
	if err := q.Push(Item[string]{Class: c, JobSeq: j, Partition: p, Value: id{c, j, p}.String()}); err != nil {
		t.Fatalf("push %v: %v", id{c, j, p}, err)
	}
}

// drain pops everything with TryPop and checks each payload belongs to its item.
func drain(t *testing.T, q *Queue[string]) []id {
	t.Helper()
	var out []id
	for {
		it, ok := q.TryPop()
		if !ok {
			return out
		}
		if it.Value != idOf(it).String() {
			t.Fatalf("item %v carries payload %q", idOf(it), it.Value)
		}
		out = append(out, idOf(it))
	}
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name string
		push []id
		want []id
	}{
		{
			name: "within a class by job then partition",
			push: []id{{Normal, 2, 1}, {Normal, 1, 2}, {Normal, 2, 0}, {Normal, 1, 0}, {Normal, 1, 1}},
			want: []id{{Normal, 1, 0}, {Normal, 1, 1}, {Normal, 1, 2}, {Normal, 2, 0}, {Normal, 2, 1}},
		},
		{
			name: "classes in priority order whatever the job numbers",
			push: []id{{Low, 1, 0}, {Normal, 2, 0}, {High, 3, 0}, {Critical, 4, 0}, {Normal, 5, 0}},
			want: []id{{Critical, 4, 0}, {High, 3, 0}, {Normal, 2, 0}, {Normal, 5, 0}, {Low, 1, 0}},
		},
		{
			name: "partition index compares as a number",
			push: []id{{High, 9, 10}, {High, 9, 2}, {High, 9, 1}},
			want: []id{{High, 9, 1}, {High, 9, 2}, {High, 9, 10}},
		},
		{
			name: "large sequence numbers",
			push: []id{{Low, 1 << 63, 0}, {Low, 1<<64 - 1, 0}, {Low, 0, 0}},
			want: []id{{Low, 0, 0}, {Low, 1 << 63, 0}, {Low, 1<<64 - 1, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New[string]()
			for _, p := range tc.push {
				mustPush(t, q, p.c, p.j, p.p)
			}
			if got := q.Len(); got != len(tc.push) {
				t.Fatalf("Len = %d, want %d", got, len(tc.push))
			}
			snap := q.Snapshot()
			snapIDs := make([]id, len(snap))
			for i, it := range snap {
				snapIDs[i] = idOf(it)
			}
			if !slices.Equal(snapIDs, tc.want) {
				t.Fatalf("Snapshot = %v, want %v", snapIDs, tc.want)
			}
			if got := drain(t, q); !slices.Equal(got, tc.want) {
				t.Fatalf("pop order = %v, want %v", got, tc.want)
			}
			if q.Len() != 0 {
				t.Fatalf("Len after drain = %d", q.Len())
			}
		})
	}
}

func TestOrderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var all []id
	for j := uint64(0); j < 40; j++ {
		c := api.Classes[rng.IntN(api.NumClasses)]
		for p := range rng.IntN(6) + 1 {
			all = append(all, id{c, j, p})
		}
	}
	want := slices.Clone(all)
	slices.SortFunc(want, func(a, b id) int {
		if a.c != b.c {
			return int(a.c) - int(b.c)
		}
		if a.j != b.j {
			if a.j < b.j {
				return -1
			}
			return 1
		}
		return a.p - b.p
	})
	rng.Shuffle(len(all), func(i, k int) { all[i], all[k] = all[k], all[i] })
	q := New[string]()
	for _, p := range all {
		mustPush(t, q, p.c, p.j, p.p)
	}
	for _, c := range api.Classes {
		n := 0
		for _, w := range want {
			if w.c == c {
				n++
			}
		}
		if got := q.ClassLen(c); got != n {
			t.Errorf("ClassLen(%s) = %d, want %d", c, got, n)
		}
	}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("pop order = %v\nwant %v", got, want)
	}
}

func TestPushRejects(t *testing.T) {
	q := New[string]()
	mustPush(t, q, Normal, 1, 0)
	tests := []struct {
		name string
		item Item[string]
		dup  bool
	}{
		{"zero class", Item[string]{Class: 0, JobSeq: 2}, false},
		{"class past low", Item[string]{Class: Low + 1, JobSeq: 2}, false},
		{"negative partition", Item[string]{Class: Normal, JobSeq: 2, Partition: -1}, false},
		{"duplicate", Item[string]{Class: Normal, JobSeq: 1, Partition: 0}, true},
		{"duplicate in another class", Item[string]{Class: High, JobSeq: 1, Partition: 0}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []func(Item[string]) error{q.Push, q.Requeue} {
				err := op(tc.item)
				if err == nil {
					t.Fatalf("accepted %+v", tc.item)
				}
				if got := errors.Is(err, ErrDuplicate); got != tc.dup {
					t.Fatalf("errors.Is(%v, ErrDuplicate) = %v, want %v", err, got, tc.dup)
				}
			}
		})
	}
	if q.Len() != 1 {
		t.Fatalf("rejected items changed the queue: Len = %d", q.Len())
	}
}

func TestRequeueKeepsPlace(t *testing.T) {
	q := New[string]()
	for j := uint64(1); j <= 2; j++ {
		for p := range 3 {
			mustPush(t, q, Normal, j, p)
		}
	}
	first, _ := q.TryPop()
	second, _ := q.TryPop()
	// A later job arrives while job 1's partitions are out.
	mustPush(t, q, Normal, 3, 0)
	// Partition 1 fails first and is put back, then partition 0.
	for _, it := range []Item[string]{second, first} {
		if err := q.Requeue(it); err != nil {
			t.Fatal(err)
		}
	}
	want := []id{{Normal, 1, 0}, {Normal, 1, 1}, {Normal, 1, 2}, {Normal, 2, 0}, {Normal, 2, 1}, {Normal, 2, 2}, {Normal, 3, 0}}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order after requeue = %v, want %v", got, want)
	}
	if got := q.Requeued(); got != 2 {
		t.Fatalf("Requeued = %d, want 2", got)
	}
}

func TestRemove(t *testing.T) {
	q := New[string]()
	for j := uint64(1); j <= 3; j++ {
		for p := 2; p >= 0; p-- {
			mustPush(t, q, High, j, p)
		}
	}
	mustPush(t, q, Low, 9, 0)
	got := q.Remove(2)
	var ids []id
	for _, it := range got {
		ids = append(ids, idOf(it))
	}
	if want := []id{{High, 2, 0}, {High, 2, 1}, {High, 2, 2}}; !slices.Equal(ids, want) {
		t.Fatalf("Remove(2) = %v, want %v", ids, want)
	}
	if again := q.Remove(2); len(again) != 0 {
		t.Fatalf("second Remove(2) = %v, want nothing", again)
	}
	if none := q.Remove(42); len(none) != 0 {
		t.Fatalf("Remove of unknown job = %v", none)
	}
	// A removed partition may be pushed again (resubmitted).
	mustPush(t, q, High, 2, 0)
	want := []id{{High, 1, 0}, {High, 1, 1}, {High, 1, 2}, {High, 2, 0}, {High, 3, 0}, {High, 3, 1}, {High, 3, 2}, {Low, 9, 0}}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("after remove = %v, want %v", got, want)
	}
}

func TestPopBlocksUntilPush(t *testing.T) {
	q := New[string]()
	got := make(chan Item[string], 1)
	go func() {
		it, err := q.Pop(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	notTaken(t, got, "Pop on an empty queue")
	mustPush(t, q, Low, 5, 0)
	taken(t, got, id{Low, 5, 0}, "Pop after Push")
}

// notTaken fails if the waiter that sends on got takes an item within 20ms;
// what names the call in the failure.
func notTaken(t *testing.T, got <-chan Item[string], what string) {
	t.Helper()
	select {
	case it := <-got:
		t.Fatalf("%s took %v", what, idOf(it))
	case <-time.After(20 * time.Millisecond):
	}
}

// taken fails unless the waiter that sends on got takes want within 5s; what
// names the call in the failure.
func taken(t *testing.T, got <-chan Item[string], want id, what string) {
	t.Helper()
	select {
	case it := <-got:
		if idOf(it) != want {
			t.Fatalf("%s took %v, want %v", what, idOf(it), want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not wake", what)
	}
}

func TestPopCancel(t *testing.T) {
	q := New[string]()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := q.Pop(ctx)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Pop after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Pop did not return after cancel")
	}
	// A cancelled context takes nothing even when work is there.
	mustPush(t, q, Normal, 1, 0)
	if _, err := q.Pop(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Pop with cancelled ctx: %v", err)
	}
	if q.Len() != 1 {
		t.Fatalf("cancelled Pop took an item")
	}
}

func TestPopClassAndPopIf(t *testing.T) {
	q := New[string]()
	mustPush(t, q, Critical, 3, 0)
	mustPush(t, q, Normal, 1, 0)
	mustPush(t, q, Normal, 1, 1)
	mustPush(t, q, Low, 2, 0)
	ctx := context.Background()

	it, err := q.PopClass(ctx, Normal)
	if err != nil || idOf(it) != (id{Normal, 1, 0}) {
		t.Fatalf("PopClass(normal) = %v, %v", idOf(it), err)
	}
	it, err = q.PopIf(ctx, func(it Item[string]) bool { return it.Class != Critical })
	if err != nil || idOf(it) != (id{Normal, 1, 1}) {
		t.Fatalf("PopIf(not critical) = %v, %v", idOf(it), err)
	}
	it, err = q.PopIf(ctx, func(it Item[string]) bool { return it.JobSeq == 2 })
	if err != nil || idOf(it) != (id{Low, 2, 0}) {
		t.Fatalf("PopIf(job 2) = %v, %v", idOf(it), err)
	}
	if _, err := q.PopClass(ctx, 0); err == nil {
		t.Fatal("PopClass accepted class 0")
	}
	if _, err := q.PopIf(ctx, nil); err == nil {
		t.Fatal("PopIf accepted nil match")
	}

	// A PopClass waiter is not woken into taking another class's item.
	got := make(chan Item[string], 1)
	go func() {
		it, err := q.PopClass(ctx, High)
		if err != nil {
			t.Error(err)
		}
		got <- it
	}()
	mustPush(t, q, Low, 4, 0)
	notTaken(t, got, "PopClass(high)")
	mustPush(t, q, High, 5, 0)
	taken(t, got, id{High, 5, 0}, "PopClass(high)")
	if want := []id{{Critical, 3, 0}, {Low, 4, 0}}; !slices.Equal(drain(t, q), want) {
		t.Fatal("wrong items left")
	}
}

// TestConcurrent runs producers and consumers together under -race: every
// item is delivered exactly once, and each consumer sees a single
// producer's items in order (a producer pushes its job's partitions in
// order and they are never reordered within a class).
func TestConcurrent(t *testing.T) {
	const producers, consumers, jobsEach, parts = 4, 4, 50, 5
	q := New[string]()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	for pr := range producers {
		wg.Go(func() {
			for j := range jobsEach {
				seq := uint64(pr*jobsEach + j)
				c := api.Classes[int(seq)%api.NumClasses]
				for p := range parts {
					mustPush(t, q, c, seq, p)
				}
			}
		})
	}
	total := producers * jobsEach * parts
	results := make(chan []id, consumers)
	var taken sync.WaitGroup
	var mu sync.Mutex
	remaining := total
	for range consumers {
		taken.Go(func() {
			var mine []id
			for {
				mu.Lock()
				if remaining == 0 {
					mu.Unlock()
					break
				}
				remaining--
				mu.Unlock()
				it, err := q.Pop(ctx)
				if err != nil {
					t.Errorf("Pop: %v (lost wake-up?)", err)
					break
				}
				mine = append(mine, idOf(it))
			}
			results <- mine
		})
	}
	wg.Wait()
	taken.Wait()
	close(results)
	seen := make(map[id]bool)
	for mine := range results {
		// Partitions of one job that one consumer took must be in order.
		last := make(map[uint64]int)
		for _, x := range mine {
			if seen[x] {
				t.Fatalf("%v delivered twice", x)
			}
			seen[x] = true
			if p, ok := last[x.j]; ok && p >= x.p {
				t.Fatalf("job %d: partition %d after %d", x.j, x.p, p)
			}
			last[x.j] = x.p
		}
	}
	if len(seen) != total || q.Len() != 0 {
		t.Fatalf("delivered %d of %d, %d left", len(seen), total, q.Len())
	}
}

func BenchmarkPushPop(b *testing.B) {
	q := New[int]()
	ctx := context.Background()
	// Keep a realistic backlog so inserts and pops work on a populated queue.
	for j := range 1000 {
		_ = q.Push(Item[int]{Class: api.Classes[j%api.NumClasses], JobSeq: uint64(j)})
	}
	seq := uint64(1000)
	for b.Loop() {
		_ = q.Push(Item[int]{Class: api.Classes[seq%api.NumClasses], JobSeq: seq})
		seq++
		if _, err := q.Pop(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
