package daemon

import (
	"slices"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
)

// TestTenantsSeeOwnJobs: a client that is not an admin lists, reads, awaits
// and cancels only its own jobs (another's is "no job"), request ids are per
// client, an admin sees every job, and a job larger than the per-client limit
// is refused naming the limit.
func TestTenantsSeeOwnJobs(t *testing.T) {
	f := start(t, opts{extra: "[limits]\nqueued_partitions_per_client = 3\n"})
	ctx := testCtx(t, 2*time.Minute)
	alice := api.WithIdentity(ctx, api.Identity{Name: "alice"})
	bob := api.WithIdentity(ctx, api.Identity{Name: "bob"})

	req := func(seed uint64, n int) api.SubmitRequest {
		return api.SubmitRequest{Circuit: small, Witnesses: witnesses(t, small, n, seed), RequestID: "same-key"}
	}
	a, err := f.d.Submit(alice, req(300, 2))
	if err != nil {
		t.Fatal(err)
	}
	// Bob's "same-key" is his own: a new job, not a conflict with Alice's.
	b, err := f.d.Submit(bob, req(301, 1))
	if err != nil || b.ID == a.ID {
		t.Fatalf("bob's submission with alice's request id: %v (job %s, alice's %s)", err, b.ID, a.ID)
	}
	if again, err := f.d.Submit(alice, req(300, 2)); err != nil || again.ID != a.ID {
		t.Errorf("alice's retry: %v, job %s; want her job %s", err, again.ID, a.ID)
	}

	_, err = f.d.Get(bob, a.ID)
	checkErr(t, err, api.ErrNotFound, "no job")
	_, err = f.d.Cancel(bob, a.ID)
	checkErr(t, err, api.ErrNotFound, "no job")
	err = f.d.Await(bob, a.ID, func(api.JobEvent) error { return nil })
	checkErr(t, err, api.ErrNotFound, "no job")

	ids := func(js []api.Job, err error) []string {
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, j := range js {
			out = append(out, j.ID)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(f.d.List(bob, api.ListFilter{})); !slices.Equal(got, []string{b.ID}) {
		t.Errorf("bob lists %v, want only his job %s", got, b.ID)
	}
	if got := ids(f.d.List(alice, api.ListFilter{})); !slices.Equal(got, []string{a.ID}) {
		t.Errorf("alice lists %v, want only her job %s", got, a.ID)
	}
	// The daemon's own user on the socket is an admin.
	all := []string{a.ID, b.ID}
	slices.Sort(all)
	if got := ids(f.c.List(ctx, api.ListFilter{})); !slices.Equal(got, all) {
		t.Errorf("admin lists %v, want every job %v", got, all)
	}
	if _, err := f.c.Get(ctx, a.ID); err != nil {
		t.Errorf("admin reads alice's job: %v", err)
	}

	_, err = f.d.Submit(alice, api.SubmitRequest{Circuit: small, Witnesses: witnesses(t, small, 4, 302)})
	checkErr(t, err, api.ErrResourceExhausted, "client alice", "limits.queued_partitions_per_client = 3")

	if done, err := f.d.Get(alice, a.ID); err != nil {
		t.Fatal(err)
	} else if done.ID != a.ID {
		t.Errorf("alice reads her job: %s", done.ID)
	}
	if _, err := f.d.Cancel(alice, a.ID); err != nil {
		t.Errorf("alice cancels her job: %v", err)
	}
}

// TestCheckLimits counts waiting partitions per owner and in total.
func TestCheckLimits(t *testing.T) {
	job := func(owner string, states ...api.PartitionState) *liveJob {
		j := &liveJob{owner: owner, state: api.JobRunning, class: api.ClassNormal}
		for i, s := range states {
			j.parts = append(j.parts, api.Partition{Index: i, State: s})
		}
		return j
	}
	d := &Daemon{cfg: &config.Config{Limits: config.Limits{QueuedPartitions: 6, QueuedPartitionsPerClient: 4}}, jobs: map[string]*liveJob{
		"a1": job("alice", api.PartitionQueued, api.PartitionProving, api.PartitionVerified),
		"b1": job("bob", api.PartitionQueued, api.PartitionQueued),
		"b0": {owner: "bob", state: api.JobDone, parts: []api.Partition{{State: api.PartitionQueued}}}, // ended: not counted
	}}
	for _, tc := range []struct {
		owner string
		n     int
		want  string // "" for admitted
	}{
		{"alice", 2, ""},
		{"alice", 3, "limits.queued_partitions_per_client = 4"},
		{"carol", 2, ""},
		{"carol", 3, "limits.queued_partitions = 6"},
		{"bob", 2, ""},
	} {
		err := d.checkLimits(tc.owner, tc.n, api.ClassNormal)
		if tc.want == "" && err != nil {
			t.Errorf("%s +%d: %v, want admitted", tc.owner, tc.n, err)
		}
		if tc.want != "" {
			checkErr(t, err, api.ErrResourceExhausted, tc.want)
		}
	}
}

// TestCheckLimitsCriticalShare: clients at their own limits fill the global
// limit only up to its critical share; a critical job still gets that share,
// and the whole limit still bounds it.
func TestCheckLimitsCriticalShare(t *testing.T) {
	waiting := func(owner string, n int) *liveJob {
		j := &liveJob{owner: owner, state: api.JobRunning, class: api.ClassNormal}
		for i := 0; i < n; i++ {
			j.parts = append(j.parts, api.Partition{Index: i, State: api.PartitionQueued})
		}
		return j
	}
	// Four clients at their limit of 6 and a fifth with 3: 27 waiting, the
	// 30 of queued_partitions less the 3 held for critical work.
	jobs := map[string]*liveJob{}
	for _, c := range []string{"a", "b", "c", "d"} {
		jobs[c] = waiting(c, 6)
	}
	jobs["e"] = waiting("e", 3)
	d := &Daemon{cfg: &config.Config{Limits: config.Limits{QueuedPartitions: 30, QueuedPartitionsPerClient: 6, CriticalReserve: 3}}, jobs: jobs}
	for _, tc := range []struct {
		owner string
		n     int
		class api.Class
		want  []string // fragments of the refusal; nil for admitted
	}{
		{"e", 1, api.ClassNormal, []string{"27 partitions waiting", "1 more of class normal", "the 27 of limits.queued_partitions = 30", "limits.critical_reserve = 3"}},
		{"f", 1, api.ClassHigh, []string{"1 more of class high", "limits.critical_reserve = 3"}},
		{"f", 1, api.ClassLow, []string{"limits.critical_reserve = 3"}},
		{"f", 3, api.ClassCritical, nil},
		{"e", 3, api.ClassCritical, nil},
		{"f", 4, api.ClassCritical, []string{"4 more would pass limits.queued_partitions = 30"}},
		{"a", 1, api.ClassCritical, []string{"client a", "limits.queued_partitions_per_client = 6"}},
	} {
		err := d.checkLimits(tc.owner, tc.n, tc.class)
		if tc.want == nil && err != nil {
			t.Errorf("%s +%d %s: %v, want admitted", tc.owner, tc.n, tc.class, err)
		}
		if tc.want != nil {
			checkErr(t, err, api.ErrResourceExhausted, tc.want...)
		}
	}
	// Without a share held back, batch work may fill the whole limit.
	d.cfg.Limits.CriticalReserve = 0
	if err := d.checkLimits("e", 3, api.ClassNormal); err != nil {
		t.Errorf("no critical share: %v, want admitted", err)
	}
}
