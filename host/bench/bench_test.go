package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/client"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/inprocess"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/host/waterfall"
	"github.com/zkhost/zkhost/sdk/circuits"
)

var backendBin string // built by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zkbench-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	backendBin = filepath.Join(dir, config.DefaultBackendName)
	code := 1
	if prebuilt := os.Getenv("ZKHOST_TEST_BACKEND"); prebuilt != "" {
		// A machine without Go (the test binary built elsewhere) names the backend.
		backendBin = prebuilt
		code = m.Run()
	} else if out, err := exec.Command("go", "build", "-o", backendBin, "github.com/zkhost/zkhost/cmd/zkhost-backend-cpu").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench tests: go build: %v\n%s", err, out)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// fakeTarget proves every partition after a fixed delay, failing the jobs
// whose number is in fail.
type fakeTarget struct {
	mu           sync.Mutex
	n            int
	delay        time.Duration
	submitDelay  time.Duration // each Submit takes it, as accepting a job does
	fail         map[int]bool
	refuse       error
	active, peak int
}

func (f *fakeTarget) Submit(_ context.Context, req api.SubmitRequest) (api.Job, error) {
	if f.refuse != nil {
		return api.Job{}, f.refuse
	}
	time.Sleep(f.submitDelay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.active++
	f.peak = max(f.peak, f.active)
	return api.Job{ID: fmt.Sprintf("job%d", f.n), Partitions: make([]api.Partition, len(req.Witnesses)), CreatedAt: time.Now()}, nil
}

func (f *fakeTarget) Wait(ctx context.Context, id string, onProof func()) (api.Job, error) {
	var n int
	fmt.Sscanf(id, "job%d", &n)
	j := api.Job{ID: id, CreatedAt: time.Now(), State: api.JobDone}
	for i := range 2 {
		q := time.Now()
		time.Sleep(f.delay)
		s := time.Now()
		j.Partitions = append(j.Partitions, api.Partition{Index: i, State: api.PartitionVerified, Device: fmt.Sprintf("dev%d", i), QueuedAt: q, SynthStart: s, SynthEnd: s, ProveStart: s, ProveEnd: s.Add(time.Millisecond), VerifiedAt: s.Add(time.Millisecond)})
		if onProof != nil {
			onProof()
		}
	}
	if f.fail[n] {
		j.State, j.Error = api.JobFailed, "partition 1 failed"
		j.Partitions[1].State = api.PartitionFailed
	}
	j.FinishedAt = time.Now()
	f.mu.Lock()
	f.active--
	f.mu.Unlock()
	return j, nil
}

func (f *fakeTarget) Status(context.Context) (api.StatusReport, error) {
	return api.StatusReport{Devices: []api.DeviceStatus{{Name: "dev0", Model: "fake", Healthy: true}, {Name: "dev1", Model: "fake", Restarts: 1, Healthy: true}}}, nil
}

func chainSpec(t *testing.T, k int) circuits.Spec {
	t.Helper()
	spec, err := circuits.Lookup("chain", map[string]int{"k": k})
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestRunCountsAndConcurrency(t *testing.T) {
	f := &fakeTarget{delay: 10 * time.Millisecond, submitDelay: 5 * time.Millisecond}
	var progress bytes.Buffer
	r, err := Run(context.Background(), f, Options{Spec: chainSpec(t, 4), Jobs: 6, Concurrency: 3, Partitions: 2, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if r.Proofs != 12 || r.FailedJobs != 0 || r.Circuit != "chain-k4" {
		t.Errorf("result %+v", r)
	}
	if f.peak != 3 {
		t.Errorf("peak concurrency %d, want 3", f.peak)
	}
	if want := 12 / r.Wall.Minutes(); math.Abs(r.ProofsPerMinute-want) > 1e-6 || math.Abs(r.SecondsPerProof-r.Wall.Seconds()/12) > 1e-9 {
		t.Errorf("rates %v/min %vs/proof over %v", r.ProofsPerMinute, r.SecondsPerProof, r.Wall)
	}
	// Each submission took the target's 5 ms at least; a job carries two
	// chain witnesses.
	inputs, err := Options{Spec: chainSpec(t, 4), Partitions: 2}.partitionInputs()
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(inputs[0]) + len(inputs[1])); r.SubmitP50 < 5*time.Millisecond || r.SubmitP99 < r.SubmitP50 || r.JobBytes != want {
		t.Errorf("submit p50 %v p99 %v, job bytes %d (want 5 ms at least and %d)", r.SubmitP50, r.SubmitP99, r.JobBytes, want)
	}
	if r.DeviceBusyPercent >= 0 || r.PhasesSource != "job timestamps" {
		t.Errorf("without a timeline: busy %v from %s", r.DeviceBusyPercent, r.PhasesSource)
	}
	queued := r.Phases[0]
	if queued.Name != "queued" || queued.Count != 12 || queued.P50 < 10*time.Millisecond {
		t.Errorf("queued phase %+v", queued)
	}
	// Not a terminal: one line per update, the last one complete.
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "12/12 proofs") || !strings.Contains(last, "[##############################]") {
		t.Errorf("last progress line %q", last)
	}
	var out bytes.Buffer
	Print(&out, r)
	if r.ProofsByDevice["dev0"] != 6 || r.ProofsByDevice["dev1"] != 6 || len(r.ProofsByDevice) != 2 {
		t.Errorf("proofs by device %v, want 6 on each of dev0 and dev1", r.ProofsByDevice)
	}
	for _, want := range []string{"proofs per minute", "seconds per proof", "submit p50 / p99", "n/a: no timeline", "phases (from job timestamps)", "ready_wait",
		"dev0: 6 proofs, 0 restarts, healthy", "dev1: 6 proofs, 1 restarts, healthy"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunFailures(t *testing.T) {
	f := &fakeTarget{fail: map[int]bool{2: true}}
	r, err := Run(context.Background(), f, Options{Spec: chainSpec(t, 4), Jobs: 3, Concurrency: 1, Partitions: 2})
	if err == nil || !strings.Contains(err.Error(), "1 of 3 jobs failed") || !strings.Contains(err.Error(), "partition 1 failed") {
		t.Errorf("error %v", err)
	}
	if r == nil || r.Proofs != 4 || r.FailedJobs != 1 {
		t.Errorf("result %+v", r)
	}

	refused := &fakeTarget{refuse: errors.New(`unknown circuit "chain-k4"`)}
	if _, err := Run(context.Background(), refused, Options{Spec: chainSpec(t, 4), Jobs: 3, Concurrency: 2, Partitions: 1}); err == nil || !strings.Contains(err.Error(), "unknown circuit") {
		t.Errorf("refused: %v", err)
	}
	if _, err := Run(context.Background(), f, Options{Spec: chainSpec(t, 4), Jobs: 0, Concurrency: 1, Partitions: 1}); err == nil {
		t.Error("zero jobs accepted")
	}
}

func TestProgressLine(t *testing.T) {
	p := &progress{total: 40}
	got := p.line(10, time.Minute)
	want := "[#######-----------------------] 10/40 proofs  10.0/min  ETA 3m0s  elapsed 1m0s\n"
	if got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	p.tty = true
	if got := p.line(0, 0); !strings.HasPrefix(got, "\r\x1b[K[------") || strings.HasSuffix(got, "\n") {
		t.Errorf("terminal line %q", got)
	}
}

// TestStandaloneEndToEnd runs real proofs through a daemon in this process with
// the CPU backend, then through its API with a client, and checks what the
// timeline says: device busy time, phases, synthesis worker lanes, one key load.
func TestStandaloneEndToEnd(t *testing.T) {
	dir := t.TempDir()
	spec := chainSpec(t, 8)
	tl := filepath.Join(dir, "timeline.jsonl")
	ctx := context.Background()
	s, err := StartStandalone(ctx, StandaloneOptions{Spec: spec, Options: inprocess.Options{KeyDir: filepath.Join(dir, "keys"), Backend: backendBin, Workers: 2, Timeline: tl}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := Run(ctx, s.Target(), Options{Spec: spec, Circuit: s.Circuit, Jobs: 3, Concurrency: 2, Partitions: 2, TimelinePath: tl,
		MemoryEvery: 10 * time.Millisecond, SampleProcesses: true})
	if err != nil {
		t.Fatal(err)
	}
	// The sampler saw this process and the CPU backend it launched.
	if m := r.Memory; m == nil || m.Samples < 1 || m.Note != "" || m.Host.RSS == 0 || m.Host.Anon == 0 || m.Children.RSS == 0 || m.MachineUsed == 0 {
		t.Errorf("memory peaks %+v", r.Memory)
	}
	if r.Proofs != 6 || r.PhasesSource != "timeline" || r.Analysis == nil {
		t.Fatalf("result %+v", r)
	}
	if r.DeviceBusyPercent <= 0 || r.DeviceBusyPercent > 100 || r.DeviceBusy["dev0"] != r.DeviceBusyPercent {
		t.Errorf("device busy %.1f%% %v", r.DeviceBusyPercent, r.DeviceBusy)
	}
	for _, ph := range []string{timeline.PhaseBudgetWait, timeline.PhaseSynthesis, timeline.PhaseStage, "ready_wait", timeline.PhaseFinalize, "ntt", "msm_g1", "msm_g2"} {
		if p, ok := r.Analysis.Phase(ph); !ok || p.Count != 6 {
			t.Errorf("phase %s: %+v", ph, p)
		}
	}
	// The key is preloaded at the daemon's start; a partition that came
	// during the load waited for it (its own key_load): at most two.
	if p, ok := r.Analysis.Phase(timeline.PhaseKeyLoad); ok && p.Count > 2 {
		t.Errorf("key_load %+v", p)
	}
	if !r.Steady.OK || r.Steady.Proofs+r.Steady.WarmupProofs > 6 || r.Steady.WarmupProofs < 1 || r.Steady.TimelineBusyPercent < 0 || r.Steady.TimelineBusyPercent > 100 {
		t.Errorf("steady state %+v", r.Steady)
	}
	lanes := map[string]bool{}
	for _, e := range r.Analysis.Events() {
		if e.Phase == timeline.PhaseSynthesis {
			lanes[e.Lane] = true
		}
		if e.Phase == "msm_g1" && e.Lane != "dev0" {
			t.Errorf("msm_g1 on lane %q", e.Lane)
		}
	}
	for l := range lanes {
		if l != "synth0" && l != "synth1" {
			t.Errorf("synthesis on lane %q", l)
		}
	}
	// Backend phases sit inside their prove call: after the dispatch.
	dispatch := map[string]time.Time{}
	for _, e := range r.Analysis.Events() {
		if e.Phase == timeline.PhaseDispatch {
			dispatch[fmt.Sprint(e.Job, e.Partition, e.Attempt)] = e.Start
		}
	}
	for _, e := range r.Analysis.Events() {
		if e.Phase == "ntt" && e.Start.Before(dispatch[fmt.Sprint(e.Job, e.Partition, e.Attempt)]) {
			t.Errorf("ntt of %s/%d starts before its dispatch", e.Job, e.Partition)
		}
	}
	if m := s.Daemon.Metrics(); m == nil {
		t.Error("daemon has no metrics")
	}

	// The same daemon through its API: only this run's jobs count.
	sock := filepath.Join(dir, "zk.sock")
	srv, err := api.Listen(api.Config{Socket: sock}, s.Daemon, nil)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Stop(ctx)
	c, err := client.Dial(sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r2, err := Run(ctx, ClientTarget(c), Options{Spec: spec, Circuit: s.Circuit, Jobs: 3, Concurrency: 1, Partitions: 1, TimelinePath: tl, Isolated: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Two single proofs after the run give the isolated device time: the
	// backend-measured busy time of one proof, within its prove call.
	if st := r2.Steady; st.IsolatedProofs != 2 || st.Isolated <= 0 || st.Isolated > st.IsolatedWall || st.IsolatedProofsPerMinute <= 0 || st.Ratio <= 0 {
		t.Errorf("isolated figures %+v", st)
	}
	if r2.Proofs != 3 || r2.Analysis.Partitions != 3 || r2.Analysis.Jobs != 3 {
		t.Errorf("API run: %d proofs, timeline %d jobs %d partitions", r2.Proofs, r2.Analysis.Jobs, r2.Analysis.Partitions)
	}
	var out bytes.Buffer
	Print(&out, r2)
	if !strings.Contains(out.String(), "phases (from timeline)") || !strings.Contains(out.String(), tl) ||
		!strings.Contains(out.String(), "isolated device time per proof") || !strings.Contains(out.String(), "ratio to the isolated rate") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestReadEventsPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.jsonl")
	full := `{"job":"a","partition":0,"attempt":0,"phase":"synthesis","start":"2026-11-01T00:00:00Z","end":"2026-11-01T00:00:01Z"}` + "\n" +
		`{"job":"b","partition":0,"attempt":0,"phase":"synthesis","start":"2026-11-01T00:00:00Z","end":"2026-11-01T00:00:01Z"}` + "\n"
	// The daemon's buffer flushed in the middle of the second line.
	os.WriteFile(path, []byte(full+`{"job":"a","partition":1,"pha`), 0o600)
	evs, err := readEvents(path, map[string]bool{"a": true})
	if err != nil || len(evs) != 1 || evs[0].Job != "a" {
		t.Fatalf("events %+v, error %v", evs, err)
	}
	os.WriteFile(path, []byte("garbage\n"), 0o600)
	if _, err := readEvents(path, nil); err == nil {
		t.Error("a bad complete line was accepted")
	}
}

// TestReadEventsOfClusterJobs: a cluster host's timeline names its own
// one-partition jobs; their request ids map their events onto the cluster
// job and partition they served, a redelivery as another attempt, and a job
// of the host's own stays out.
func TestReadEventsOfClusterJobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.jsonl")
	line := func(job, request string) string {
		return fmt.Sprintf(`{"job":%q,"partition":0,"attempt":0,"request":%q,"lane":"dev0","phase":"prove","start":"2026-11-01T00:00:00Z","end":"2026-11-01T00:00:01Z"}`+"\n", job, request)
	}
	data := line("local1", api.ClusterRequestID("cj", 2, 1)) + line("local2", api.ClusterRequestID("cj", 2, 2)) +
		line("local3", api.ClusterRequestID("other", 0, 1)) + line("own", "my-request")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, err := readEvents(path, map[string]bool{"cj": true})
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %+v, error %v; want the two of cluster job cj", evs, err)
	}
	for i, e := range evs {
		if e.Job != "cj" || e.Partition != 2 || e.Attempt != i {
			t.Errorf("event %d: job %q partition %d attempt %d, want cj 2 %d", i, e.Job, e.Partition, e.Attempt, i)
		}
	}
}

// TestSteadyWindow: the window opens at the latest of the devices' first
// proofs and closes at the last submission; proofs before it are the
// warm-up, proofs after it (the drain) count in neither.
func TestSteadyWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	part := func(dev string, ms int) api.Partition {
		return api.Partition{State: api.PartitionVerified, Device: dev, VerifiedAt: at(ms)}
	}
	jobs := []api.Job{
		// dev0 warms at 1000, dev1 (a cold key) at 3000: the window opens at 3000.
		{Partitions: []api.Partition{part("dev0", 1000), part("dev1", 3000), part("dev0", 2000)}},
		{Partitions: []api.Partition{part("dev0", 4000), part("dev1", 5000), part("dev0", 6000), part("dev1", 7000)}},
		// Verified after the last submission at 7000: the drain.
		{Partitions: []api.Partition{part("dev0", 8000), part("dev1", 9000), {State: api.PartitionFailed, Device: "dev0", VerifiedAt: at(7500)}}},
	}
	s := steadyWindow(jobs, t0, at(7000), at(9000))
	if !s.OK || !s.Start.Equal(at(3000)) || s.Window != 4*time.Second || s.WarmupProofs != 3 || s.Proofs != 4 {
		t.Fatalf("window %+v: want 3s..7s, 3 warm-up proofs, 4 proofs", s)
	}
	if s.ProofsPerMinute != 60 {
		t.Errorf("%.3f proofs/min, want 60 (4 in 4 s)", s.ProofsPerMinute)
	}
	s.Isolated = 2 * time.Second // two devices at 2 s a proof allow 60/min
	s.compare(2)
	if s.IsolatedProofsPerMinute != 60 || s.Ratio != 1 {
		t.Errorf("isolated %.3f/min ratio %.3f, want 60 and 1", s.IsolatedProofsPerMinute, s.Ratio)
	}

	// Too few jobs: the last submission before dev1's first proof.
	s = steadyWindow(jobs, t0, at(2500), at(9000))
	if s.OK || !strings.Contains(s.Note, "raise --jobs") || s.Proofs != 9 || s.Window != 9*time.Second {
		t.Errorf("no steady window: %+v, want the whole run's 9 proofs over 9 s and a note", s)
	}
}

// TestSteadyFromTimeline: busy and utilization within the window only.
func TestSteadyFromTimeline(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	pct := func(v float64) *float64 { return &v }
	evs := []timeline.Event{
		// Busy 0..1000 (warm-up) and 2000..3000 (in the window 1000..4000).
		{Job: "j", Lane: "dev0", Phase: "msm_g1", Start: at(0), End: at(1000), DeviceBusy: time.Second},
		{Job: "j", Partition: 1, Lane: "dev0", Phase: "msm_g1", Start: at(2000), End: at(3000), DeviceBusy: time.Second},
		{Lane: "dev0", Phase: timeline.PhaseUtilization, Start: at(0), End: at(2000), Utilization: pct(100), Source: "nvml"},
		{Lane: "dev0", Phase: timeline.PhaseUtilization, Start: at(2000), End: at(4000), Utilization: pct(40), Source: "nvml"},
	}
	a, err := waterfall.Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	s := Steady{Start: at(1000), End: at(4000), Window: 3 * time.Second}
	s.fromTimeline(a, 1)
	if math.Abs(s.TimelineBusyPercent-100.0/3) > 1e-9 {
		t.Errorf("busy %.3f%%, want 33.333%% (1 s of 3)", s.TimelineBusyPercent)
	}
	if want := (100*1 + 40*2) / 3.0; math.Abs(s.UtilizationPercent-want) > 1e-9 || s.UtilizationSource != "nvml" || s.UtilizationSamples != 2 {
		t.Errorf("utilization %.3f%% (%s, %d), want %.3f%% (nvml, 2)", s.UtilizationPercent, s.UtilizationSource, s.UtilizationSamples, want)
	}
}
