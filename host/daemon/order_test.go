package daemon

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestPriorityOrder submits three low jobs, then a critical and a normal one, while
// the one device proves one partition at a time. Every proof must verify; the
// critical job must finish before the normal one, and both before every low job
// none of whose partitions had started synthesis when they were queued (such a job
// waits behind them for synthesis and for the device); within a class, partitions
// reach the device in (job, partition) order and jobs finish in submission order.
func TestPriorityOrder(t *testing.T) {
	f := start(t, opts{})
	ctx := testCtx(t, 2*time.Minute)

	type sub struct {
		name  string
		class api.Class
		ws    [][]byte
		job   api.Job
		final api.Job
	}
	var subs []*sub
	add := func(name string, class api.Class, n int) *sub {
		s := &sub{name: name, class: class, ws: witnesses(t, small, n, uint64(len(subs)+1))}
		s.job = f.submit(ctx, small, class, s.ws)
		subs = append(subs, s)
		return s
	}
	lows := []*sub{add("low1", api.ClassLow, 4), add("low2", api.ClassLow, 4), add("low3", api.ClassLow, 4)}
	// notStarted lists the finished low jobs none of whose partitions had started
	// synthesis at at: every partition of theirs waited behind a job of a higher
	// class queued then, for synthesis and for the device.
	notStarted := func(lows []*sub, at time.Time) map[string]bool {
		out := map[string]bool{}
		for _, s := range lows {
			none := true
			for _, p := range s.final.Partitions {
				if !p.SynthStart.After(at) {
					none = false
				}
			}
			if none {
				out[s.name] = true
			}
		}
		return out
	}
	crit := add("critical", api.ClassCritical, 2)
	norm := add("normal", api.ClassNormal, 2)

	var wg sync.WaitGroup
	errs := make([]error, len(subs))
	for i, s := range subs {
		wg.Go(func() {
			s.final, errs[i] = f.c.Await(ctx, s.job.ID, nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("await %s: %v", subs[i].name, err)
		}
	}
	for _, s := range subs {
		verifyProofs(t, small, s.final, s.ws)
		checkTimes(t, s.final)
		if s.final.Class != s.class {
			t.Errorf("%s: class %s, submitted %s", s.name, s.final.Class, s.class)
		}
	}
	if t.Failed() {
		return
	}

	// Which low jobs had not started when the critical and the normal job were
	// queued is read from the finished jobs' times, not sampled around Submit:
	// a Submit returns after the journal has synced the job to disk, which on a
	// slow disk takes longer than the whole of a small low job.
	beforeCritical := notStarted(lows, crit.final.Partitions[0].QueuedAt)
	beforeNormal := notStarted(lows, norm.final.Partitions[0].QueuedAt)
	if len(beforeNormal) == 0 {
		t.Logf("every low job had started synthesis before the normal job was queued; the order check across classes is weaker")
	}
	for _, s := range lows {
		if beforeCritical[s.name] && !crit.final.FinishedAt.Before(s.final.FinishedAt) {
			t.Errorf("critical job finished at %s, not before %s (%s), none of whose partitions had started synthesis when the critical job was queued",
				crit.final.FinishedAt.Format(time.StampMicro), s.name, s.final.FinishedAt.Format(time.StampMicro))
		}
		if beforeNormal[s.name] && !norm.final.FinishedAt.Before(s.final.FinishedAt) {
			t.Errorf("normal job finished at %s, not before %s (%s), none of whose partitions had started synthesis when the normal job was queued",
				norm.final.FinishedAt.Format(time.StampMicro), s.name, s.final.FinishedAt.Format(time.StampMicro))
		}
	}
	if len(beforeNormal) > 0 && !crit.final.FinishedAt.Before(norm.final.FinishedAt) {
		t.Errorf("critical job finished at %s, after the normal job (%s)", crit.final.FinishedAt.Format(time.StampMicro), norm.final.FinishedAt.Format(time.StampMicro))
	}
	for i := 1; i < len(lows); i++ {
		if !lows[i-1].final.FinishedAt.Before(lows[i].final.FinishedAt) {
			t.Errorf("%s finished at %s, not before %s (%s)", lows[i-1].name, lows[i-1].final.FinishedAt.Format(time.StampMicro),
				lows[i].name, lows[i].final.FinishedAt.Format(time.StampMicro))
		}
	}

	// Dispatch order within the low class: one device slot, so each partition's
	// prove start is after the previous one's, in (job, partition) order.
	type dispatch struct {
		name string
		idx  int
		at   time.Time
	}
	var low []dispatch
	for _, s := range lows {
		for _, p := range s.final.Partitions {
			if p.Attempts != 1 {
				t.Errorf("%s partition %d took %d attempts", s.name, p.Index, p.Attempts)
			}
			low = append(low, dispatch{s.name, p.Index, p.ProveStart})
		}
	}
	if !sort.SliceIsSorted(low, func(a, b int) bool { return low[a].at.Before(low[b].at) }) {
		for _, d := range low {
			t.Logf("%s/%d dispatched %s", d.name, d.idx, d.at.Format(time.StampMicro))
		}
		t.Errorf("low partitions did not reach the device in (job, partition) order")
	}
	t.Logf("low jobs not started: when critical was queued %v, when normal was queued %v", beforeCritical, beforeNormal)
}
