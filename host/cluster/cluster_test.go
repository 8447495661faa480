package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/journal"
)

// startServers runs n NATS servers in this process, routed into one
// JetStream cluster, and returns their client URLs.
func startServers(t testing.TB, n int) []string {
	t.Helper()
	_, urls := startServerSet(t, n)
	return urls
}

// startServerSet is startServers, giving the servers too, so a test can stop
// one (which, in process, closes its connections as a kill -9 would). A
// port apitest.FreeAddr found free can be taken by another process before the
// server listens on it (test packages run at once): the set is then started
// again on fresh ports, up to three times.
func startServerSet(t testing.TB, n int) ([]*server.Server, []string) {
	t.Helper()
	srvs, urls, _ := startServerSetWith(t, n, func(cc *config.Cluster) (*server.Server, *server.Options, error) {
		s, err := startServer(cc, hclog.NewNullLogger())
		return s, nil, err
	})
	return srvs, urls
}

// startServerSetWith starts n routed servers on fresh ports, each by start
// from its config (which also returns the options it started with, when it
// has them), and shuts them down when the test ends. When one does not start
// (a port taken meanwhile), it shuts down those it started and tries again on
// fresh ports, up to three times.
func startServerSetWith(t testing.TB, n int, start func(*config.Cluster) (*server.Server, *server.Options, error)) ([]*server.Server, []string, []*server.Options) {
	t.Helper()
	var err error
	for range 3 {
		ccs, urls := serverSetConfigs(t, n)
		var srvs []*server.Server
		var opts []*server.Options
		for _, cc := range ccs {
			var s *server.Server
			var o *server.Options
			if s, o, err = start(cc); err != nil {
				break
			}
			srvs, opts = append(srvs, s), append(opts, o)
		}
		if err == nil {
			for _, s := range srvs {
				t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
			}
			return srvs, urls, opts
		}
		for _, s := range srvs {
			s.Shutdown()
			s.WaitForShutdown()
		}
		t.Logf("starting %d NATS servers: %v; again on fresh ports", n, err)
	}
	t.Fatal(err)
	return nil, nil, nil
}

// serverSetConfigs is the config of each of n NATS servers routed to one
// another on fresh loopback ports (one server alone has no routes), and the
// URLs their clients connect to.
func serverSetConfigs(t testing.TB, n int) ([]*config.Cluster, []string) {
	// Every client and route port distinct (FreeAddrs).
	addrs := apitest.FreeAddrs(t, 2*n)
	clients, routes := addrs[:n], addrs[n:]
	var ccs []*config.Cluster
	var urls []string
	for i := range n {
		var others []string
		for j := range n {
			if j != i {
				others = append(others, "nats-route://"+routes[j])
			}
		}
		cc := &config.Cluster{Name: fmt.Sprintf("s%d", i), Listen: clients[i], ClusterName: "test",
			ClusterListen: routes[i], Routes: others, StoreDir: t.TempDir()}
		if n == 1 {
			cc.ClusterListen, cc.Routes = "", nil
		}
		ccs, urls = append(ccs, cc), append(urls, "nats://"+clients[i])
	}
	return ccs, urls
}

// member joins the servers at urls as a cluster member without a local
// daemon: for the tests of the bucket and the queue, which need none.
func member(t testing.TB, urls []string, name string, replicas int) *Cluster {
	t.Helper()
	cfg := &config.Config{
		Cluster: &config.Cluster{Name: name, URLs: urls, Replicas: replicas, AckWait: 5 * time.Second, MaxDeliver: 3},
		Journal: config.Journal{Retention: time.Hour},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// publishOne creates a job of one normal partition on c and publishes it.
func publishOne(t testing.TB, ctx context.Context, c *Cluster) {
	t.Helper()
	rec := createJob(t, c, 1, api.ClassNormal)
	if err := c.publish(ctx, rec, [][]byte{{1}}, false); err != nil {
		t.Fatal(err)
	}
}

// createJob records a job of n partitions, as Submit does.
func createJob(t testing.TB, c *Cluster, n int, class api.Class) *jobRecord {
	t.Helper()
	id, err := journal.NewID()
	if err != nil {
		t.Fatal(err)
	}
	ws := make([][]byte, n)
	for i := range ws {
		ws[i] = []byte{byte(i)}
	}
	r := newJobRecord(id, api.SubmitRequest{Circuit: "chain", Witnesses: ws, Class: class}, "", c.cfg.Name)
	b, _ := json.Marshal(r)
	if _, err := c.kv.Create(context.Background(), jobKey(id), b); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecordedOnce: every partition of a job is proved six times at once (two
// racing deliveries on each of three hosts, each host on its own NATS
// server); each proof is stored once, never replaced, and the job moves to
// done exactly once, with every partition marked.
func TestRecordedOnce(t *testing.T) {
	urls := startServers(t, 3)
	var members []*Cluster
	for i := range 3 {
		members = append(members, member(t, urls[i:i+1], fmt.Sprintf("h%d", i), 3))
	}
	const parts = 16
	rec := createJob(t, members[0], parts, api.ClassNormal)

	// A watch sees every stored write: count the job's moves to done and
	// each proof's writes.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := members[1].kv.Watch(ctx, "*."+rec.ID+".>", jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	jw, err := members[1].kv.Watch(ctx, jobKey(rec.ID), jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]int{}
	dones := 0
	var mu sync.Mutex
	seen := make(chan struct{})
	go func() {
		for e := range w.Updates() {
			if e != nil {
				mu.Lock()
				writes[e.Key()]++
				mu.Unlock()
			}
		}
	}()
	go func() {
		for e := range jw.Updates() {
			if e == nil {
				continue
			}
			r, err := decodeJob(e.Value())
			if err == nil && r.state() == api.JobDone {
				mu.Lock()
				dones++
				if dones == 1 {
					close(seen)
				}
				mu.Unlock()
			}
		}
	}()

	var wg sync.WaitGroup
	for idx := range parts {
		for m, c := range members {
			for g := range 2 {
				wg.Go(func() {
					pr := proofRecord{Proof: []byte{byte(m), byte(g)}, Host: c.cfg.Name, At: time.Now()}
					if err := c.recordProof(context.Background(), rec.ID, idx, pr); err != nil {
						t.Errorf("recordProof(%d) on %s: %v", idx, c.cfg.Name, err)
					}
				})
			}
		}
	}
	wg.Wait()
	select {
	case <-seen:
	case <-time.After(time.Minute):
		t.Fatal("the job was never seen done")
	}
	got, err := members[2].Get(context.Background(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != api.JobDone || got.Count(api.PartitionVerified) != parts {
		t.Fatalf("job is %s with %d verified, want done with %d", got.State, got.Count(api.PartitionVerified), parts)
	}
	// The proofs' watch is a consumer of its own: wait until it has seen
	// every partition's proof (stored before the job was done).
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := len(writes)
		mu.Unlock()
		if n == parts || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if dones != 1 {
		t.Errorf("the job moved to done %d times, want once", dones)
	}
	for idx := range parts {
		if n := writes[proofKey(rec.ID, idx)]; n != 1 {
			t.Errorf("proof of partition %d written %d times, want once", idx, n)
		}
		if len(got.Partitions[idx].Proof) != 2 {
			t.Errorf("partition %d has proof %x", idx, got.Partitions[idx].Proof)
		}
	}
}

// TestCriticalFirst: with partitions of every class waiting, a host is given
// critical ones first, then high, normal, low, whatever the order they were
// queued in.
func TestCriticalFirst(t *testing.T) {
	urls := startServers(t, 1)
	c := member(t, urls, "h0", 1)
	order := []api.Class{api.ClassLow, api.ClassNormal, api.ClassHigh, api.ClassCritical, api.ClassNormal, api.ClassCritical}
	for _, class := range order {
		r := createJob(t, c, 1, class)
		if err := c.publish(context.Background(), r, [][]byte{{1}}, false); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The test is of the puller's order, so it waits until every class's
	// consumer counts its messages: on a loaded machine a consumer learns of
	// a stored message a moment later, and a no-wait fetch in that moment
	// finds nothing (the puller then takes the next class, as it should).
	for {
		pending := uint64(0)
		for _, cons := range c.cons {
			info, err := cons.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pending += info.NumPending
		}
		if pending == uint64(len(order)) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var got []string
	for range order {
		m := c.next(ctx, c.cons[:])
		if m == nil {
			t.Fatal("no partition")
		}
		got = append(got, strings.Split(m.Subject(), ".")[2])
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	want := "critical critical high normal normal low"
	if strings.Join(got, " ") != want {
		t.Errorf("pulled %v, want %s", got, want)
	}
}

// TestRecords: the job record's bits and the local request ids.
func TestRecords(t *testing.T) {
	r := newJobRecord("abc", api.SubmitRequest{Circuit: "c", Witnesses: make([][]byte, 10)}, "", "h")
	for _, i := range []int{0, 7, 8, 9} {
		r.setVerified(i)
	}
	if r.countVerified() != 4 || r.verified(1) || !r.verified(9) || r.verified(10) || r.verified(-1) {
		t.Errorf("bits: %08b", r.Verified)
	}
	b, _ := json.Marshal(r)
	back, err := decodeJob(b)
	if err != nil || back.countVerified() != 4 || back.Class != api.ClassNormal || back.state() != api.JobQueued {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	if _, err := decodeJob([]byte(`{"partitions":10,"verified":"AA=="}`)); err == nil {
		t.Error("a record with too few bits was accepted")
	}
}

// TestCancel: cancelling a job ends it once, on every host's view, and drops
// its waiting partitions from the queue at once; an Await on another host
// ends with the cancel.
func TestCancel(t *testing.T) {
	urls := startServers(t, 1)
	a, b := member(t, urls, "h0", 1), member(t, urls, "h1", 1)
	rec := createJob(t, a, 5, api.ClassHigh)
	if err := a.publish(context.Background(), rec, make([][]byte, 5), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	awaited := make(chan []api.JobEvent, 1)
	go func() {
		var evs []api.JobEvent
		err := b.Await(ctx, rec.ID, func(ev api.JobEvent) error { evs = append(evs, ev); return nil })
		if err != nil {
			t.Errorf("await: %v", err)
		}
		awaited <- evs
	}()
	got, err := a.Cancel(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != api.JobCancelled || got.Count(api.PartitionCancelled) != 5 {
		t.Errorf("cancelled job: %s with %d partitions cancelled", got.State, got.Count(api.PartitionCancelled))
	}
	// A second cancel changes nothing.
	if _, ended, err := b.endJob(ctx, rec.ID, api.JobCancelled, "again"); err != nil || ended {
		t.Errorf("second cancel: ended %v, err %v", ended, err)
	}
	evs := <-awaited
	if last := evs[len(evs)-1]; last.Kind != api.EventJobCancelled || last.Job == nil || last.Job.Error != "cancelled by a client" {
		t.Errorf("await ended with %+v", last)
	}
	batch, err := b.cons[1].FetchNoWait(5) // high
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range batch.Messages() {
		n++
	}
	if n != 0 {
		t.Errorf("%d partitions of the cancelled job are still queued", n)
	}
	if _, err := b.Get(ctx, "ffff"); err == nil || !strings.Contains(err.Error(), `no job "ffff"`) {
		t.Errorf("get of an unknown job: %v", err)
	}
}
