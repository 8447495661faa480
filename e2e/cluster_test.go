package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// clusterAckWait is the tests' [cluster] ack_wait: how soon the partitions of
// a killed host go to another. Hosts extend it every fifth while they prove,
// so a loaded machine costs at worst a duplicate proof, which is recorded once.
const clusterAckWait = "4s"

// startCluster runs n `zkhost serve` hosts, each embedding one NATS server of
// one JetStream cluster (routes on loopback, replicas 3), and waits until
// every API answers. The hosts start together: JetStream elects its leader
// once a majority of the servers is up.
func startCluster(t testing.TB, n int) []*host {
	hosts, _ := startClusterWith(t, n, func(int) (hostConf, string) { return hostConf{Devices: []deviceConf{cpuDevice()}}, "" })
	return hosts
}

// startClusterWith is startCluster with host i's config given by conf: its
// hostConf, and lines added to its [cluster] table. It returns the hosts and
// the URLs of their embedded NATS servers.
func startClusterWith(t testing.TB, n int, conf func(i int) (hostConf, string)) ([]*host, []string) {
	t.Helper()
	// A port apitest.FreeAddr found free can be taken by another process
	// before the host's NATS server listens on it (test packages run at
	// once): the hosts are then started again on fresh ports, up to three
	// times.
	for attempt := 1; ; attempt++ {
		// Every client and route port distinct (FreeAddrs).
		addrs := apitest.FreeAddrs(t, 2*n)
		clients, routes := addrs[:n], addrs[n:]
		hosts := make([]*host, n)
		for i := range n {
			var others []string
			for j := range n {
				if j != i {
					others = append(others, fmt.Sprintf("%q", "nats-route://"+routes[j]))
				}
			}
			hc, more := conf(i)
			hc.Extra = fmt.Sprintf("[cluster]\nname = \"h%d\"\nembedded = true\nlisten = %q\ncluster_name = \"e2e\"\ncluster_listen = %q\nroutes = [%s]\nreplicas = 3\nack_wait = %q\n%s\n",
				i, clients[i], routes[i], strings.Join(others, ", "), clusterAckWait, more)
			hosts[i] = newHost(t, hc)
		}
		errs := tryStartAll(hosts)
		taken := false
		for i, err := range errs {
			taken = taken || err != nil && strings.Contains(hosts[i].logText(), "address already in use")
		}
		if taken && attempt < 3 {
			for _, h := range hosts {
				h.kill()
			}
			t.Logf("a host's port was taken before it listened; starting the %d hosts again on fresh ports", n)
			continue
		}
		failOnStart(t, hosts, errs)
		urls := make([]string, n)
		for i, c := range clients {
			urls[i] = "nats://" + c
		}
		return hosts, urls
	}
}

// startAll starts hosts concurrently and waits for every API.
func startAll(t testing.TB, hosts []*host) {
	t.Helper()
	failOnStart(t, hosts, tryStartAll(hosts))
}

// tryStartAll starts hosts concurrently, waits for every API, and returns each
// host's error.
func tryStartAll(hosts []*host) []error {
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { errs[i] = h.tryStart(3 * time.Minute) })
	}
	wg.Wait()
	return errs
}

// failOnStart fails the test with the first host that did not start, and its log.
func failOnStart(t testing.TB, hosts []*host, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("host %d: %v\n%s", i, err, hosts[i].logTail(60))
		}
	}
}

// TestClusterThreeHosts: jobs submitted to any of three hosts complete with
// proofs that verify, and every host serves every job (Get and Await).
func TestClusterThreeHosts(t *testing.T) {
	hosts := startCluster(t, 3)
	const parts = 4
	type sub struct {
		job  api.Job
		seed uint64
		name string
	}
	var subs []sub
	for i, h := range hosts {
		name := []string{"chain", "merkle", "chain"}[i]
		seed := uint64(100 + i)
		subs = append(subs, sub{h.submit(name, seed, parts, api.ClassNormal), seed, name})
	}
	for i, s := range subs {
		// Await on another host than the one that took the job.
		job, events := hosts[(i+1)%3].await(s.job.ID, 3*time.Minute)
		checkDone(t, job, s.name, s.seed, parts)
		if k := events[len(events)-1].Kind; k != api.EventJobDone {
			t.Errorf("job %s: last event %s, want job_done", s.job.ID, k)
		}
		provers := map[string]bool{}
		for _, p := range job.Partitions {
			provers[strings.Split(p.Device, "/")[0]] = true
			// The prove call's bounds travel with the proof (zkhost bench
			// times isolated proofs by them).
			if p.ProveStart.IsZero() || p.ProveEnd.Before(p.ProveStart) || p.VerifiedAt.Before(p.ProveEnd) {
				t.Errorf("job %s partition %d: prove %v to %v, verified %v", s.job.ID, p.Index, p.ProveStart, p.ProveEnd, p.VerifiedAt)
			}
		}
		t.Logf("job %s (%s, taken by h%d) proved on %v", s.job.ID, s.name, i, provers)
		for _, h := range hosts {
			got, err := h.client.Get(ctxFor(t, 30*time.Second), s.job.ID)
			if err != nil {
				t.Fatalf("get job %s: %v", s.job.ID, err)
			}
			checkDone(t, got, s.name, s.seed, parts)
		}
	}
	// Every host lists the three jobs.
	for i, h := range hosts {
		jobs, err := h.client.List(ctxFor(t, 30*time.Second), api.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 3 {
			t.Errorf("host %d lists %d jobs, want 3", i, len(jobs))
		}
	}
	// A retried submission (same request id, same content) is the same job,
	// on whichever host it lands; other content under that id is refused.
	req := api.SubmitRequest{Circuit: "chain", Witnesses: witnesses(t, "chain", 7, 2), RequestID: "retry-1"}
	a, err := hosts[0].client.Submit(ctxFor(t, 30*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hosts[2].client.Submit(ctxFor(t, 30*time.Second), req)
	if err != nil || b.ID != a.ID {
		t.Fatalf("retried submit on another host: job %s, err %v; want job %s", b.ID, err, a.ID)
	}
	req.Witnesses = witnesses(t, "chain", 8, 2)
	if _, err := hosts[1].client.Submit(ctxFor(t, 30*time.Second), req); err == nil || !strings.Contains(err.Error(), "already names job "+a.ID) {
		t.Errorf("request id reused with other content: err %v, want a conflict naming job %s", err, a.ID)
	}
	job, _ := hosts[1].await(a.ID, 3*time.Minute)
	checkDone(t, job, "chain", 7, 2)
	clusterBadInputs(t, hosts)
	clusterOperated(t, hosts)
	for _, h := range hosts {
		h.stop()
	}
}

// TestClusterHostKilled: kill -9 of a host while it proves loses nothing. The
// host held partitions (its device was busy) and embedded one of the three
// NATS servers: JetStream keeps the queue and the jobs on the other two, gives
// the dead host's partitions to the others after the ack wait, and the job
// completes with every proof verified, readable from the survivors and from
// the host once it is back.
func TestClusterHostKilled(t *testing.T) {
	hosts := startCluster(t, 3)
	victim := hosts[1]
	const parts = 24
	var job api.Job
	var seed uint64
	killed := false
	for try := 0; try < 5 && !killed; try++ {
		seed = uint64(200 + try)
		job = hosts[0].submit("chain", seed, parts, api.ClassNormal)
		// Wait until the victim holds a partition of the job: a local job
		// in its daemon, which it acks only once the proof is recorded.
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			st := victim.status()
			busy := st.SynthesisRunning > 0
			for _, d := range st.Devices {
				busy = busy || d.InFlight > 0
			}
			if busy {
				victim.kill()
				killed = true
				break
			}
			got, err := hosts[2].client.Get(ctxFor(t, 30*time.Second), job.ID)
			if err == nil && got.State.Terminal() {
				break // finished before the victim was seen at work: again
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !killed {
		t.Fatalf("the victim host was never seen proving in 5 jobs")
	}
	got, _ := hosts[2].await(job.ID, 4*time.Minute)
	checkDone(t, got, "chain", seed, parts)
	got, err := hosts[0].client.Get(ctxFor(t, 30*time.Second), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkDone(t, got, "chain", seed, parts)
	// New work still flows with one host (and one NATS server) gone.
	j2 := hosts[2].submit("merkle", 9, 3, api.ClassCritical)
	got, _ = hosts[0].await(j2.ID, 3*time.Minute)
	checkDone(t, got, "merkle", 9, 3)
	// The victim comes back, rejoins, and serves the job.
	if err := victim.tryStart(3 * time.Minute); err != nil {
		t.Fatalf("restart: %v\n%s", err, victim.logTail(60))
	}
	got, err = victim.client.Get(ctxFor(t, 30*time.Second), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkDone(t, got, "chain", seed, parts)
	for _, h := range hosts {
		h.stop()
	}
}

// BenchmarkClusterThroughput proves jobs of 24 chain-k8 partitions on CPU
// backends (one proving thread each): one host alone (no NATS), one host with
// an embedded NATS server (the one-machine cluster), and three hosts sharing
// three embedded servers (replicas 3), all on this machine. Every proof is
// verified in the test. Reports partitions per second.
func BenchmarkClusterThroughput(b *testing.B) {
	const parts = 24
	for _, tc := range []struct {
		name  string
		hosts func(b *testing.B) []*host
	}{
		{"alone", func(b *testing.B) []*host {
			h := newHost(b, hostConf{Devices: []deviceConf{cpuDevice()}})
			startAll(b, []*host{h})
			return []*host{h}
		}},
		{"embedded-1", func(b *testing.B) []*host {
			extra := fmt.Sprintf("[cluster]\nname = \"h0\"\nembedded = true\nlisten = %q\n", apitest.FreeAddr(b))
			h := newHost(b, hostConf{Devices: []deviceConf{cpuDevice()}, Extra: extra})
			startAll(b, []*host{h})
			return []*host{h}
		}},
		{"hosts-3", func(b *testing.B) []*host { return startCluster(b, 3) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			hosts := tc.hosts(b)
			ws := witnesses(b, "chain", 1, parts)
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				job, err := hosts[i%len(hosts)].client.Submit(ctxFor(b, time.Minute), api.SubmitRequest{Circuit: "chain", Witnesses: ws})
				if err != nil {
					b.Fatal(err)
				}
				got, _ := hosts[(i+1)%len(hosts)].await(job.ID, 5*time.Minute)
				b.StopTimer()
				checkDone(b, got, "chain", 1, parts)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N*parts)/time.Since(start).Seconds(), "partitions/s")
		})
	}
}

// clusterBadInputs: a cluster host refuses what a lone host refuses, with the
// same clear errors, and a witness that does not satisfy the circuit fails its
// job (after the cluster's deliveries) with the solver's reason, readable from
// every host, while the cluster goes on proving.
func clusterBadInputs(t *testing.T, hosts []*host) {
	t.Helper()
	c := hosts[0].client
	ctx := ctxFor(t, time.Minute)
	good := witnesses(t, "chain", 20, 1)[0]
	for _, tc := range []struct {
		name string
		req  api.SubmitRequest
		want string
	}{
		{"unknown circuit", api.SubmitRequest{Circuit: "nope", Witnesses: [][]byte{good}}, `unknown circuit "nope"`},
		{"witness of the wrong size", api.SubmitRequest{Circuit: "chain", Witnesses: [][]byte{good[:len(good)-1]}}, "witness 0"},
		{"witness of another circuit", api.SubmitRequest{Circuit: "merkle", Witnesses: [][]byte{good}}, "witness 0"},
	} {
		if _, err := c.Submit(ctx, tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := hosts[1].client.Get(ctx, "0123456789abcdef0123456789abcdef"); err == nil || !strings.Contains(err.Error(), "no job") {
		t.Errorf("get of an unknown job: %v", err)
	}
	// A well-formed witness the circuit does not accept: chain's public
	// output changed.
	bad := witnesses(t, "chain", 21, 1)[0]
	bad = append([]byte(nil), bad...)
	bad[len(bad)-1] ^= 1
	job, err := c.Submit(ctx, api.SubmitRequest{Circuit: "chain", Witnesses: [][]byte{bad, good}})
	if err != nil {
		t.Fatalf("submit of an unsatisfied witness: %v (it is refused only when solved)", err)
	}
	got, _ := hosts[2].await(job.ID, 3*time.Minute)
	if got.State != api.JobFailed || !strings.Contains(got.Error, "partition 0") {
		t.Errorf("job with an unsatisfied witness: %s (%s), want failed naming partition 0", got.State, got.Error)
	}
	t.Logf("unsatisfied witness: %s", got.Error)
	j := hosts[2].submit("merkle", 22, 2, api.ClassLow)
	got, _ = hosts[0].await(j.ID, 3*time.Minute)
	checkDone(t, got, "merkle", 22, 2)
}
