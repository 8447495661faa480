package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/host/waterfall"
	"github.com/zkhost/zkhost/sdk/circuits"
)

// Target is the daemon a benchmark drives.
type Target interface {
	// Submit queues a job.
	Submit(ctx context.Context, req api.SubmitRequest) (api.Job, error)
	// Wait follows a job to its end, calling onProof (which may be nil) each
	// time one of its partitions is proved and verified, and returns the final
	// job.
	Wait(ctx context.Context, jobID string, onProof func()) (api.Job, error)
	// Status reports the daemon's devices.
	Status(ctx context.Context) (api.StatusReport, error)
}

// Awaiter is what ClientTarget needs of a client (host/client.Client has it).
type Awaiter interface {
	Submit(ctx context.Context, req api.SubmitRequest) (api.Job, error)
	Await(ctx context.Context, jobID string, fn func(api.JobEvent) error) (api.Job, error)
	Status(ctx context.Context) (api.StatusReport, error)
}

// ClientTarget drives a daemon through its API client.
func ClientTarget(c Awaiter) Target { return clientTarget{c} }

type clientTarget struct{ c Awaiter }

func (t clientTarget) Submit(ctx context.Context, req api.SubmitRequest) (api.Job, error) {
	return t.c.Submit(ctx, req)
}

func (t clientTarget) Wait(ctx context.Context, id string, onProof func()) (api.Job, error) {
	return t.c.Await(ctx, id, func(e api.JobEvent) error {
		if e.Kind == api.EventPartitionVerified && onProof != nil {
			onProof()
		}
		return nil
	})
}

func (t clientTarget) Status(ctx context.Context) (api.StatusReport, error) { return t.c.Status(ctx) }

// ServiceTarget drives a daemon in this process through its api.Service.
func ServiceTarget(s api.Service) Target { return serviceTarget{s} }

type serviceTarget struct{ s api.Service }

func (t serviceTarget) Submit(ctx context.Context, req api.SubmitRequest) (api.Job, error) {
	if err := req.Validate(); err != nil {
		return api.Job{}, err
	}
	return t.s.Submit(ctx, req)
}

func (t serviceTarget) Wait(ctx context.Context, id string, onProof func()) (api.Job, error) {
	var final *api.Job
	err := t.s.Await(ctx, id, func(e api.JobEvent) error {
		if e.Kind == api.EventPartitionVerified && onProof != nil {
			onProof()
		}
		if e.Kind.Terminal() {
			final = e.Job
		}
		return nil
	})
	if err != nil {
		return api.Job{}, err
	}
	if final == nil {
		return api.Job{}, fmt.Errorf("job %s: the daemon ended its events without the final job", id)
	}
	return *final, nil
}

func (t serviceTarget) Status(ctx context.Context) (api.StatusReport, error) { return t.s.Status(ctx) }

// Options is one benchmark.
type Options struct {
	// Spec is the example circuit whose witnesses the jobs carry, unless
	// Inputs are given.
	Spec circuits.Spec
	// Inputs, when set, are what the jobs carry instead of Spec's witnesses:
	// partition i of every job is Inputs[i % len(Inputs)], gnark witnesses,
	// or wire assignments (circom .wtns among them) when Assignments is set.
	// They prove any circuit the daemon serves, imported keys included.
	Inputs      [][]byte
	Assignments bool
	// Circuit is the circuit's name at the daemon; empty means Spec.ID().
	Circuit string
	// Jobs, Concurrency and Partitions: Jobs jobs of Partitions partitions,
	// Concurrency of them submitted and unfinished at any time.
	Jobs, Concurrency, Partitions int
	// Class is the jobs' priority class (ClassUnspecified: the circuit's).
	Class api.Class
	// TimelinePath, when set, is the daemon's timeline file, read after the run
	// for device-busy time and phase percentiles (only this run's jobs count).
	TimelinePath string
	// Progress, when set, receives a progress bar.
	Progress io.Writer
	// Isolated, above 0, is how many single-partition jobs are proved one at
	// a time after the run, on the warm daemon, to measure the isolated
	// device time per proof; IsolatedTime, when set instead, gives it.
	Isolated     int
	IsolatedTime time.Duration
	// MemoryEvery, above 0, samples memory at this interval during the run
	// (memory.go): the daemon's budget and partitions at work always, and this
	// process, its children and the machine from /proc when SampleProcesses is
	// set (a daemon in this process: bench.Standalone).
	MemoryEvery     time.Duration
	SampleProcesses bool
}

// Result is what a benchmark measured.
type Result struct {
	Circuit     string
	Jobs        int
	Partitions  int // per job
	Concurrency int
	// Proofs counts the verified partition proofs; FailedJobs the jobs that did
	// not finish done.
	Proofs     int
	FailedJobs int
	Errors     []string
	// Wall runs from the first submission to the last job's end.
	Wall            time.Duration
	ProofsPerMinute float64
	SecondsPerProof float64
	JobLatencyP50   time.Duration
	JobLatencyP99   time.Duration
	// SubmitP50 and SubmitP99 are how long the daemon took to accept a job
	// (its inputs sent and journaled, as its client waits), over the run's
	// submissions, Concurrency at once; JobBytes is one job's inputs. Large
	// inputs (a circom .wtns a partition) can make accepting, not proving,
	// what keeps a device waiting.
	SubmitP50, SubmitP99 time.Duration
	JobBytes             int64
	// Devices is the daemon's devices at the end of the run (restarts and
	// health say whether one was lost and came back).
	Devices []api.DeviceStatus
	// ProofsByDevice counts the run's verified proofs by the device that
	// proved them.
	ProofsByDevice map[string]int
	// DeviceBusyPercent is the devices' measured busy time over Wall times the
	// number of devices; negative when no timeline was read.
	DeviceBusyPercent float64
	DeviceBusy        map[string]float64 // per device, percent of Wall
	// Phases are the timeline's phases, or (without a timeline) the phases the
	// jobs' partition timestamps show.
	Phases       []waterfall.PhaseStats
	PhasesSource string // "timeline" or "job timestamps"
	TimelinePath string
	// Analysis is the timeline analysis of this run's events, when read.
	Analysis *waterfall.Analysis `json:"-"`

	// Memory is what the memory sampler saw (nil when Options.MemoryEvery is 0).
	Memory *MemoryPeaks `json:",omitempty"`

	// Steady is the run's steady state (steady.go): the figures of the
	// window from each device's first verified proof (its key loaded, its
	// pipeline warm) to the last submission (after it the backlog drains).
	Steady Steady
}

// partitionInputs are the inputs of one job's partitions: o.Inputs in turn,
// or else Spec's witnesses.
func (o Options) partitionInputs() ([][]byte, error) {
	in := make([][]byte, o.Partitions)
	for i := range in {
		if len(o.Inputs) > 0 {
			in[i] = o.Inputs[i%len(o.Inputs)]
			continue
		}
		w, err := o.Spec.Witness(i, 0)
		if err != nil {
			return nil, fmt.Errorf("bench: witness %d: %w", i, err)
		}
		if in[i], err = w.MarshalBinary(); err != nil {
			return nil, fmt.Errorf("bench: witness %d: %w", i, err)
		}
	}
	return in, nil
}

// request is the submission of one job whose partitions carry inputs.
func (o Options) request(inputs [][]byte) api.SubmitRequest {
	r := api.SubmitRequest{Circuit: o.Circuit, Class: o.Class}
	if o.Assignments {
		r.Assignments = inputs
	} else {
		r.Witnesses = inputs
	}
	return r
}

// Run runs the benchmark o against t.
func Run(ctx context.Context, t Target, o Options) (*Result, error) {
	if o.Jobs < 1 || o.Concurrency < 1 || o.Partitions < 1 {
		return nil, fmt.Errorf("bench: jobs (%d), concurrency (%d) and partitions (%d) must be at least 1", o.Jobs, o.Concurrency, o.Partitions)
	}
	if o.Circuit == "" {
		if len(o.Inputs) > 0 {
			return nil, errors.New("bench: inputs without the name of the circuit they are for")
		}
		o.Circuit = o.Spec.ID()
	}
	witnesses, err := o.partitionInputs()
	if err != nil {
		return nil, err
	}
	st, err := t.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: daemon status: %w", err)
	}

	total := o.Jobs * o.Partitions
	bar := newProgress(o.Progress, total)
	var proved atomic.Int64
	var (
		mu         sync.Mutex
		jobs       []api.Job
		errs       []string
		submitErr  error // the first Submit that failed: no more jobs are fed
		lastSubmit time.Time
		submits    []time.Duration // the successful Submits' durations
	)
	next := make(chan int)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mem *memorySampler
	if o.MemoryEvery > 0 {
		mem = startMemorySampler(ctx, t, o.SampleProcesses, o.MemoryEvery)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range min(o.Concurrency, o.Jobs) {
		wg.Go(func() {
			for range next {
				began := time.Now()
				job, err := t.Submit(ctx, o.request(witnesses))
				mu.Lock()
				lastSubmit = time.Now()
				if err == nil {
					submits = append(submits, lastSubmit.Sub(began))
				}
				mu.Unlock()
				if err != nil {
					mu.Lock()
					if submitErr == nil {
						submitErr = fmt.Errorf("submit: %w", err)
					}
					mu.Unlock()
					continue
				}
				id := job.ID
				job, err = t.Wait(ctx, id, func() { bar.set(int(proved.Add(1))) })
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Sprintf("job %s: %v", id, err))
				} else {
					jobs = append(jobs, job)
					if job.State != api.JobDone {
						errs = append(errs, fmt.Sprintf("job %s %s: %s", job.ID, job.State, job.Error))
					}
				}
				mu.Unlock()
			}
		})
	}
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				bar.set(int(proved.Load()))
			}
		}
	}()
feed:
	for i := 0; i < o.Jobs; i++ {
		mu.Lock()
		failed := submitErr != nil
		mu.Unlock()
		if failed {
			break // a daemon that refuses one job (unknown circuit, too large) refuses them all
		}
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(stop)
	wall := time.Since(start)
	bar.done(int(proved.Load()))
	if submitErr != nil {
		if len(jobs) == 0 {
			return nil, fmt.Errorf("bench: %w", submitErr)
		}
		errs = append(errs, submitErr.Error())
	}

	r := &Result{
		Circuit: o.Circuit, Jobs: o.Jobs, Partitions: o.Partitions, Concurrency: o.Concurrency,
		Wall: wall, Devices: st.Devices, Errors: errs, DeviceBusyPercent: -1, TimelinePath: o.TimelinePath,
	}
	if mem != nil {
		p := mem.finish()
		r.Memory = &p
	}
	if end, err := t.Status(ctx); err == nil {
		r.Devices = end.Devices
	}
	var lat []time.Duration
	ids := map[string]bool{}
	r.ProofsByDevice = map[string]int{}
	for _, j := range jobs {
		ids[j.ID] = true
		for _, p := range j.Partitions {
			if p.State == api.PartitionVerified {
				r.ProofsByDevice[p.Device]++
			}
		}
		if j.State != api.JobDone {
			r.FailedJobs++
			continue
		}
		r.Proofs += j.Count(api.PartitionVerified)
		if !j.FinishedAt.IsZero() {
			lat = append(lat, j.FinishedAt.Sub(j.CreatedAt))
		}
	}
	r.FailedJobs += o.Jobs - len(jobs)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.JobLatencyP50, r.JobLatencyP99 = waterfall.Percentile(lat, 50), waterfall.Percentile(lat, 99)
	sort.Slice(submits, func(i, j int) bool { return submits[i] < submits[j] })
	r.SubmitP50, r.SubmitP99 = waterfall.Percentile(submits, 50), waterfall.Percentile(submits, 99)
	for _, w := range witnesses {
		r.JobBytes += int64(len(w))
	}
	if r.Proofs > 0 {
		r.ProofsPerMinute = float64(r.Proofs) / wall.Minutes()
		r.SecondsPerProof = wall.Seconds() / float64(r.Proofs)
	}
	r.Phases, r.PhasesSource = jobPhases(jobs), "job timestamps"
	if o.TimelinePath != "" {
		a, err := readTimeline(ctx, o.TimelinePath, ids, r.Proofs)
		if err != nil {
			return r, fmt.Errorf("bench: timeline %s: %w", o.TimelinePath, err)
		}
		r.Analysis = a
		r.Phases, r.PhasesSource = a.Phases, "timeline"
		r.DeviceBusy = map[string]float64{}
		var busy time.Duration
		for _, d := range a.Devices {
			busy += d.Busy
			r.DeviceBusy[d.Name] = 100 * d.Busy.Seconds() / wall.Seconds()
		}
		if n := max(len(st.Devices), len(a.Devices)); n > 0 {
			r.DeviceBusyPercent = 100 * busy.Seconds() / (wall.Seconds() * float64(n))
		}
	}
	r.Steady = steadyWindow(jobs, start, lastSubmit, time.Now())
	if o.TimelinePath != "" && r.Analysis != nil {
		r.Steady.fromTimeline(r.Analysis, max(1, len(st.Devices)))
	}
	if len(errs) == 0 {
		r.Steady.Isolated = o.IsolatedTime
		if o.Isolated > 0 && o.IsolatedTime == 0 {
			if err := r.Steady.measureIsolated(ctx, t, o, witnesses[:1]); err != nil {
				return r, fmt.Errorf("bench: isolated proofs: %w", err)
			}
		}
		r.Steady.compare(max(1, len(st.Devices)))
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("bench: %d of %d jobs failed; first: %s", r.FailedJobs, o.Jobs, errs[0])
	}
	return r, nil
}

// readTimeline reads the events of this run's jobs from the daemon's timeline,
// waiting (up to 5 s: the daemon flushes it every second) until every proof's
// finalize event is there.
func readTimeline(ctx context.Context, path string, ids map[string]bool, proofs int) (*waterfall.Analysis, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		evs, err := readEvents(path, ids)
		if err != nil {
			return nil, err
		}
		finalized := 0
		for _, e := range evs {
			if e.Phase == timeline.PhaseFinalize {
				finalized++
			}
		}
		if finalized >= proofs || time.Now().After(deadline) {
			if len(evs) == 0 {
				return nil, errors.New("no events of this run's jobs (is it the daemon's [timeline] path?)")
			}
			return waterfall.Analyze(evs)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readEvents reads the events of the jobs in ids. The daemon may be writing the
// file: a last line without its newline is still being written and is left out.
func readEvents(path string, ids map[string]bool) ([]timeline.Event, error) {
	files := timeline.Files(path) // a daemon's timeline may have rotated during the run
	if len(files) == 0 {
		files = []string{path} // for the error
	}
	var all []timeline.Event
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		evs, err := timeline.Read(bytes.NewReader(data[:bytes.LastIndexByte(data, '\n')+1]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, evs...)
	}
	var evs, devEvs []timeline.Event
	var first, last time.Time
	for _, e := range all {
		if !ids[e.Job] {
			// A cluster host's timeline names its own one-partition jobs;
			// their request ids name the cluster job and partition.
			if job, idx, delivery, ok := api.ParseClusterRequestID(e.Request); ok && ids[job] {
				e.Job, e.Partition, e.Attempt = job, idx, int(delivery)-1+e.Attempt
			}
		}
		switch {
		case ids[e.Job]:
			evs = append(evs, e)
			if first.IsZero() || e.Start.Before(first) {
				first = e.Start
			}
			if e.End.After(last) {
				last = e.End
			}
		case e.Job == "" && e.Lane != "":
			devEvs = append(devEvs, e) // utilization samples and key preloads
		}
	}
	// Device events count where they overlap this run's.
	for _, e := range devEvs {
		if len(evs) > 0 && e.End.After(first) && e.Start.Before(last) {
			evs = append(evs, e)
		}
	}
	return evs, nil
}

// jobPhases derives phase statistics from the partitions' timestamps, for runs
// without a timeline: queued (budget wait included), synthesis (staging
// included), ready (waiting for a device), prove (the device call) and
// finalize (verification).
func jobPhases(jobs []api.Job) []waterfall.PhaseStats {
	spans := map[string][]time.Duration{}
	add := func(name string, from, to time.Time) {
		if !from.IsZero() && !to.IsZero() && !to.Before(from) {
			spans[name] = append(spans[name], to.Sub(from))
		}
	}
	for _, j := range jobs {
		for _, p := range j.Partitions {
			if p.State != api.PartitionVerified {
				continue
			}
			add("queued", p.QueuedAt, p.SynthStart)
			add("synthesis", p.SynthStart, p.SynthEnd)
			add("ready_wait", p.SynthEnd, p.ProveStart)
			add("prove", p.ProveStart, p.ProveEnd)
			add("finalize", p.ProveEnd, p.VerifiedAt)
		}
	}
	var out []waterfall.PhaseStats
	for _, name := range []string{"queued", "synthesis", "ready_wait", "prove", "finalize"} {
		ds := spans[name]
		if len(ds) == 0 {
			continue
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		ps := waterfall.PhaseStats{Name: name, Host: name != "prove", Count: len(ds), P50: waterfall.Percentile(ds, 50), P99: waterfall.Percentile(ds, 99), Max: ds[len(ds)-1]}
		for _, d := range ds {
			ps.Total += d
		}
		out = append(out, ps)
	}
	return out
}
