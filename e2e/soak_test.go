package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	bolt "go.etcd.io/bbolt"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/sdk/procfs"
)

var (
	soakLong       = flag.Bool("soak", false, "run TestSoak, the long soak (make soak)")
	soakPartitions = flag.Int("soak.partitions", 1000, "partitions of TestSoak")
	soakHostKills  = flag.Int("soak.host-kills", 2, "SIGKILLs and restarts of the host in TestSoak")
	soakKillEvery  = flag.Duration("soak.kill-every", 3*time.Second, "mean time between kill -9s of a random backend in TestSoak")
	soakSeed       = flag.Uint64("soak.seed", 1, "seed of the soak's random choices (jobs, kills, faults)")
	soakReport     = flag.String("soak.report", "", "also write the soak's summary table to this file")
	soakTimeout    = flag.Duration("soak.timeout", 45*time.Minute, "how long TestSoak may take to finish its jobs")
	soakStopShare  = flag.Float64("soak.stop-share", 0.25, "share of TestSoak's backend faults that are a SIGSTOP instead of a kill -9")
)

// soakParams sizes one soak run.
type soakParams struct {
	partitions int
	maxJob     int // partitions of the largest job
	hostKills  int
	killEvery  time.Duration
	seed       uint64
	timeout    time.Duration
	verifyCLI  bool // also check every proof with `zkhost verify`
	// stopShare is the share of the backend faults that stop the backend
	// (SIGSTOP, never continued) instead of killing it: the host must kill it
	// at its prove deadline.
	stopShare float64
}

// TestSoakShort is the soak at about 100 partitions: random kill -9 of backends
// (a few of them SIGSTOPs) and one SIGKILL and restart of the host, with a
// stored proof damaged in its journal meanwhile.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("soak skipped with -short")
	}
	soak(t, soakParams{partitions: 100, maxJob: 16, hostKills: 1, killEvery: 1500 * time.Millisecond, seed: *soakSeed, timeout: 5 * time.Minute, verifyCLI: true, stopShare: 0.25})
}

// TestSoak is the long soak `make soak` runs: by default 1,000 partitions of small
// circuits across jobs of every class, random kill -9 or SIGSTOP of backends
// every few seconds and two SIGKILLs and restarts of the host, at the first of
// which a stored proof is damaged in its journal.
func TestSoak(t *testing.T) {
	if !*soakLong {
		t.Skip("the long soak runs with -soak (make soak)")
	}
	soak(t, soakParams{partitions: *soakPartitions, maxJob: 40, hostKills: *soakHostKills, killEvery: *soakKillEvery,
		seed: *soakSeed, timeout: *soakTimeout, verifyCLI: true, stopShare: *soakStopShare})
}

// soakJob is one job the soak submitted.
type soakJob struct {
	id      string
	circuit string
	seed    uint64
	n       int
	class   api.Class
}

// soakCounts is what the soak did and saw.
type soakCounts struct {
	mu            sync.Mutex
	backendKills  int
	backendStops  int // SIGSTOPs, never continued
	killsSkipped  int // no backend was running at the chosen moment
	hostKills     int
	orphanWaitMax time.Duration
	// damaged: the job whose stored proof the soak damaged ("" before it did).
	damaged string
}

func soak(t *testing.T, p soakParams) {
	rng := rand.New(rand.NewPCG(p.seed, 0x50a4))
	cpuA := linkBinary(t, cpuBin(), "cpu-a")
	cpuB := linkBinary(t, cpuBin(), "cpu-b")
	flaky := linkBinary(t, faultBin(), "flaky")
	runFile := filepath.Join(t.TempDir(), "flaky.runs")
	conf := hostConf{
		Devices: []deviceConf{
			{Backend: cpuA, Options: map[string]string{"threads": "1"}},
			{Backend: cpuB, Options: map[string]string{"threads": "1"}},
			// A device that also crashes, lies and hangs now and then on its own.
			{Backend: flaky, Options: map[string]string{"threads": "1", "crash": "prove-mid", "crash-p": "0.03",
				"invalid-p": "0.05", "hang": "after-proof", "hang-p": "0.02",
				"seed": strconv.FormatUint(p.seed, 10), "run-file": runFile}},
		},
		// Generous for a proof of these circuits on a loaded machine, so only a
		// hang meets it.
		ProveTimeout: 5 * time.Second,
		MaxAttempts:  10,
		CrashLimit:   1000,
		CrashWindow:  time.Minute,
		Workers:      2,
	}
	h := newHost(t, conf)
	h.start()
	start := time.Now()

	// Jobs of both circuits and every class until the partitions are spent.
	classes := []api.Class{api.ClassLow, api.ClassNormal, api.ClassHigh, api.ClassCritical}
	var jobs []soakJob
	for left, i := p.partitions, 0; left > 0; i++ {
		n := min(left, 1+rng.IntN(p.maxJob))
		j := soakJob{circuit: []string{"chain", "merkle"}[i%2], seed: p.seed*1000 + uint64(i), n: n, class: classes[rng.IntN(len(classes))]}
		job, err := h.client.Submit(ctxFor(t, time.Minute), api.SubmitRequest{
			Circuit: j.circuit, Witnesses: witnesses(t, j.circuit, j.seed, n), Class: j.class,
			RequestID: fmt.Sprintf("soak-%d-%d", p.seed, i),
		})
		if err != nil {
			t.Fatalf("submit job %d: %v", i, err)
		}
		j.id = job.ID
		jobs = append(jobs, j)
		left -= n
	}
	t.Logf("submitted %d jobs, %d partitions", len(jobs), p.partitions)

	counts := &soakCounts{}
	// hostMu keeps the killer away from a host being killed and restarted.
	var hostMu sync.Mutex
	stopKiller := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		krng := rand.New(rand.NewPCG(p.seed, 0x4b111))
		for {
			wait := time.Duration(float64(p.killEvery) * (0.5 + krng.Float64()))
			select {
			case <-stopKiller:
				return
			case <-time.After(wait):
			}
			hostMu.Lock()
			if h.running() && krng.Float64() < p.stopShare {
				// A backend, not one of its prove workers, that is not
				// stopped already; the host must kill it.
				var live []proc
				for _, b := range backendsOf(h.pid()) {
					if !b.worker && !procfs.Stopped("/proc", b.pid) {
						live = append(live, b)
					}
				}
				if len(live) > 0 && syscall.Kill(live[krng.IntN(len(live))].pid, syscall.SIGSTOP) == nil {
					counts.mu.Lock()
					counts.backendStops++
					counts.mu.Unlock()
				}
			} else if h.running() {
				if bs := backendsOf(h.pid()); len(bs) > 0 {
					victim := bs[krng.IntN(len(bs))]
					if syscall.Kill(victim.pid, syscall.SIGKILL) == nil {
						counts.mu.Lock()
						counts.backendKills++
						counts.mu.Unlock()
					}
				} else {
					counts.mu.Lock()
					counts.killsSkipped++
					counts.mu.Unlock()
				}
			}
			hostMu.Unlock()
		}
	}()
	defer func() {
		select {
		case <-stopKiller:
		default:
			close(stopKiller)
		}
		<-killerDone
	}()

	// Follow progress; kill the host at even steps of it.
	deadline := time.Now().Add(p.timeout)
	nextHostKill := 1
	for {
		verified, done, failed := soakProgress(t, h, jobs, counts.damaged)
		if len(failed) > 0 {
			t.Fatalf("jobs failed: %v", failed)
		}
		if done == len(jobs) || counts.damaged != "" && done == len(jobs)-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %d of %d jobs done, %d of %d partitions verified\n%s",
				p.timeout, done, len(jobs), verified, p.partitions, h.logTail(40))
		}
		if nextHostKill <= p.hostKills && verified >= nextHostKill*p.partitions/(p.hostKills+1) {
			hostMu.Lock()
			killed := soakKillHost(t, h, counts)
			if counts.damaged == "" {
				counts.damaged = soakDamageProof(t, h, jobs)
			}
			h.start()
			// A backend stopped when its host died cannot act on the
			// parent-death signal; the next host reaps it by its pid file.
			apitest.WaitFor(t, 30*time.Second, "the new host to reap the stopped backends of the killed one", func() bool { return len(backendsOf(killed)) == 0 })
			hostMu.Unlock()
			nextHostKill++
		}
		time.Sleep(250 * time.Millisecond)
	}
	close(stopKiller)
	<-killerDone
	elapsed := time.Since(start)

	// Every proof, checked by the test with gnark; and by `zkhost verify`.
	proofDir := t.TempDir()
	dirsByCircuit := map[string][]string{}
	for _, j := range jobs {
		job, err := h.client.Get(ctxFor(t, time.Minute), j.id)
		if err != nil {
			t.Fatalf("get job %s: %v", j.id, err)
		}
		if j.id == counts.damaged {
			// Failed at the restart, with the reason; none of its proofs served.
			if job.State != api.JobFailed || !strings.Contains(job.Error, "damaged record") {
				t.Errorf("job %s, whose stored proof the soak damaged, is %s (%q), want failed with the reason", j.id, job.State, job.Error)
			}
			continue
		}
		checkDone(t, job, j.circuit, j.seed, j.n)
		if p.verifyCLI {
			dir := filepath.Join(proofDir, j.id)
			writeProofs(t, dir, job)
			dirsByCircuit[j.circuit] = append(dirsByCircuit[j.circuit], dir)
		}
	}
	for name, dirs := range dirsByCircuit {
		args := append([]string{"verify", "--quiet", "--keys", keyDir, "--circuit", name}, dirs...)
		out, err := exec.Command(zkhostBin(), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("zkhost verify (%s): %v\n%s", name, err, out)
		}
		t.Logf("zkhost verify: %s", strings.TrimSpace(string(out)))
	}

	// Every job is done: the host must hold no partition any more.
	shmLeft := h.shmFiles()
	if len(shmLeft) > 0 {
		t.Errorf("partitions still held at the end: %v", shmLeft)
	}
	h.stop()
	orphans := 0
	for _, pid := range h.pids {
		orphans += len(backendsOf(pid))
	}
	if orphans > 0 {
		t.Errorf("%d backend processes outlived their hosts", orphans)
	}
	report := soakSummary(h, p, jobs, counts, elapsed, len(shmLeft), orphans, len(conf.Devices))
	t.Logf("\n%s", report)
	if *soakReport != "" {
		if err := os.WriteFile(*soakReport, []byte(report+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// soakProgress counts verified partitions and finished jobs; it tolerates a host
// that is restarting (it answers zero progress then). The job damaged, whose
// stored proof the soak damaged, is expected to fail for it and is not counted.
func soakProgress(t *testing.T, h *host, jobs []soakJob, damaged string) (verified, done int, failed []string) {
	list, err := h.client.List(ctxFor(t, 10*time.Second), api.ListFilter{Limit: 10000})
	if err != nil {
		t.Logf("list: %v", err)
		return 0, 0, nil
	}
	ours := map[string]bool{}
	for _, j := range jobs {
		ours[j.id] = true
	}
	for _, j := range list {
		if !ours[j.ID] || j.ID == damaged && j.State == api.JobFailed && strings.Contains(j.Error, "damaged record") {
			continue
		}
		verified += j.Count(api.PartitionVerified)
		switch j.State {
		case api.JobDone:
			done++
		case api.JobFailed, api.JobCancelled:
			failed = append(failed, fmt.Sprintf("%s %s: %s", j.ID, j.State, j.Error))
		}
	}
	return verified, done, failed
}

// soakKillHost SIGKILLs the host and checks its backends follow it (with them
// goes the last mapping of its partitions: memfds leave nothing to reap), all
// but those the soak stopped, which the next host must reap. It returns the
// killed host's pid.
func soakKillHost(t *testing.T, h *host, counts *soakCounts) int {
	pid := h.pid()
	h.kill()
	killed := time.Now()
	apitest.WaitFor(t, 5*time.Second, "the backends of the killed host to exit", func() bool {
		for _, b := range backendsOf(pid) {
			if !procfs.Stopped("/proc", b.pid) {
				return false
			}
		}
		return true
	})
	counts.mu.Lock()
	defer counts.mu.Unlock()
	counts.hostKills++
	counts.orphanWaitMax = max(counts.orphanWaitMax, time.Since(killed))
	return pid
}

// soakDamageProof flips one byte inside a stored proof in the killed host's
// journal file, as a disk would, and returns the proof's job ("" when no job
// has a proof yet). The restarted host must fail that job with the reason and
// leave every other one as it was.
func soakDamageProof(t *testing.T, h *host, jobs []soakJob) string {
	path := filepath.Join(h.stateDir, "journal.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("opening the killed host's journal: %v", err)
	}
	var id string
	var proof []byte
	err = db.View(func(tx *bolt.Tx) error {
		for _, j := range jobs {
			if jb := tx.Bucket([]byte("jobs")).Bucket([]byte(j.id)); jb != nil {
				if _, v := jb.Bucket([]byte("proof")).Cursor().First(); v != nil {
					id, proof = j.id, bytes.Clone(v)
					return nil
				}
			}
		}
		return nil
	})
	db.Close()
	if err != nil || id == "" {
		t.Logf("no stored proof to damage yet (%v)", err)
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Every copy: bbolt may keep older ones in free pages.
	for off := 0; ; {
		i := bytes.Index(data[off:], proof)
		if i < 0 {
			break
		}
		data[off+i+len(proof)/2] ^= 0x10
		off += i + len(proof)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("damaged a stored proof of job %s", id)
	return id
}

// writeProofs writes a done job's proofs as `zkhost wait --out` does.
func writeProofs(t *testing.T, dir string, job api.Job) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, p := range job.Partitions {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".proof"), p.Proof, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".public"), p.PublicWitness, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// soakSummary tells what happened, from the soak's own counts and the daemon's log.
func soakSummary(h *host, p soakParams, jobs []soakJob, c *soakCounts, elapsed time.Duration, shmLeft, orphans, devices int) string {
	log := h.logText()
	count := func(s string) int { return strings.Count(log, s) }
	perClass := map[api.Class]int{}
	perCircuit := map[string]int{}
	for _, j := range jobs {
		perClass[j.class] += j.n
		perCircuit[j.circuit] += j.n
	}
	starts := count("==== e2e: starting zkhost serve")
	tw := table.NewWriter()
	tw.SetStyle(table.StyleLight)
	tw.SetTitle(fmt.Sprintf("zkhost soak: %d partitions, seed %d", p.partitions, p.seed))
	tw.AppendHeader(table.Row{"WHAT", "COUNT"})
	rows := []table.Row{
		{"jobs (all done but a damaged one, every proof verified by gnark)", len(jobs)},
		{"partitions: chain-k8 / merkle-d4-k2", fmt.Sprintf("%d / %d", perCircuit["chain"], perCircuit["merkle"])},
		{"partitions: critical / high / normal / low", fmt.Sprintf("%d / %d / %d / %d", perClass[api.ClassCritical], perClass[api.ClassHigh], perClass[api.ClassNormal], perClass[api.ClassLow])},
		{"backend kill -9s by the soak", c.backendKills},
		{"backend SIGSTOPs by the soak (never continued)", c.backendStops},
		{"backends sent SIGKILL after a kill's grace (stopped ones)", count("sending SIGKILL")},
		{"backend crashes the host saw (kills + injected)", count("backend process exited: pid=")},
		{"backend restarts", count("backend ready: ") - devices*starts},
		{"partition retries", count("partition attempt failed; retrying")},
		{"invalid proofs caught by the finalizer", count("device returned a proof that does not verify")},
		{"faults injected by the flaky backend: crash / hang / invalid", fmt.Sprintf("%d / %d / %d",
			count("fault: crashing"), count("fault: hanging"), count("fault: answering an invalid proof"))},
		{"hung backends killed at the prove deadline (others met a kill -9 first)", count("backend did not answer within its deadline")},
		{"host SIGKILLs + restarts", c.hostKills},
		{"jobs failed for a stored proof the soak damaged (the rest done)", map[bool]int{false: 0, true: 1}[c.damaged != ""]},
		{"slowest backend exit after a host kill", c.orphanWaitMax.Round(time.Millisecond).String()},
		{"partitions held at the end", shmLeft},
		{"orphaned backends", orphans},
		{"wall time", elapsed.Round(time.Second).String()},
		{"partitions per second", fmt.Sprintf("%.1f", float64(p.partitions)/elapsed.Seconds())},
	}
	for _, r := range rows {
		tw.AppendRow(r)
	}
	return tw.Render()
}
