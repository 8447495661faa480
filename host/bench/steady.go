package bench

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/host/waterfall"
)

// Steady is a run's steady state: what the daemon sustained under a backlog
// once warm. The window opens when every device has verified its first proof
// (its key is loaded, its first partition's cold costs are paid: the warm-up)
// and closes at the last submission (after it the backlog drains and the
// devices run out of work by design). Short runs hide their warm-up in the
// whole-run figures; these do not.
type Steady struct {
	// OK is false when the run had no such window (too few jobs: the last
	// submission came before every device had proved once); Note says so.
	OK   bool
	Note string `json:",omitempty"`
	// Start and End bound the window; Window is its length.
	Start, End time.Time
	Window     time.Duration
	// WarmupProofs were verified before the window; Proofs within it.
	WarmupProofs    int
	Proofs          int
	ProofsPerMinute float64
	// TimelineBusyPercent is the devices' busy time within the window (from
	// the timeline: the union of phases the backends measured busy) over
	// the window times the devices; -1 without a timeline.
	TimelineBusyPercent float64
	// UtilizationPercent is the mean of the devices' utilization samples
	// within the window (NVML's on a GPU), UtilizationSource what measured
	// it; -1 and "" when the timeline has none.
	UtilizationPercent float64
	UtilizationSource  string
	UtilizationSamples int
	// PerDevice holds each device's busy and utilization percentages.
	PerDevice map[string]DeviceSteady `json:",omitempty"`

	// Isolated is the device time of one proof on an idle, warm device
	// (the backend-measured busy time of single-partition jobs proved one
	// at a time after the run, median; or given with --isolated-time);
	// IsolatedWall the prove call's wall time for the same proofs.
	Isolated       time.Duration
	IsolatedWall   time.Duration
	IsolatedProofs int
	// IsolatedProofsPerMinute is what the devices alone would allow:
	// devices × one minute / Isolated. Ratio is ProofsPerMinute over it.
	IsolatedProofsPerMinute float64
	Ratio                   float64
}

// DeviceSteady is one device's share of the steady window.
type DeviceSteady struct {
	BusyPercent        float64
	UtilizationPercent float64 // -1 without samples
}

// steadyWindow finds the steady window of a run from its jobs' partitions:
// from the latest of each device's first verification to lastSubmit.
func steadyWindow(jobs []api.Job, start, lastSubmit, end time.Time) Steady {
	s := Steady{TimelineBusyPercent: -1, UtilizationPercent: -1}
	first := map[string]time.Time{}
	var verified []time.Time
	for _, j := range jobs {
		for _, p := range j.Partitions {
			if p.State != api.PartitionVerified || p.VerifiedAt.IsZero() {
				continue
			}
			verified = append(verified, p.VerifiedAt)
			if f, ok := first[p.Device]; !ok || p.VerifiedAt.Before(f) {
				first[p.Device] = p.VerifiedAt
			}
		}
	}
	var warm time.Time
	for _, f := range first {
		if f.After(warm) {
			warm = f
		}
	}
	s.Start, s.End = warm, lastSubmit
	if warm.IsZero() || !lastSubmit.After(warm) {
		s.Start, s.End = start, end
		s.Note = "no steady state: the last job was submitted before every device had proved once; the figures are the whole run's (raise --jobs)"
	} else {
		s.OK = true
	}
	s.Window = s.End.Sub(s.Start)
	for _, v := range verified {
		switch {
		case s.OK && !v.After(s.Start):
			s.WarmupProofs++
		case !v.After(s.End) || !s.OK:
			s.Proofs++
		}
	}
	if s.Window > 0 {
		s.ProofsPerMinute = float64(s.Proofs) / s.Window.Minutes()
	}
	return s
}

// fromTimeline fills the window's busy and utilization figures from the run's
// timeline analysis.
func (s *Steady) fromTimeline(a *waterfall.Analysis, devices int) {
	s.PerDevice = map[string]DeviceSteady{}
	var busy time.Duration
	var util float64
	utilDevices := 0
	for _, d := range a.Devices {
		b := a.BusyWindow(d.Name, s.Start, s.End)
		busy += b
		pct, source, n := a.UtilizationWindow(d.Name, s.Start, s.End)
		ds := DeviceSteady{BusyPercent: 100 * b.Seconds() / s.Window.Seconds(), UtilizationPercent: pct}
		if s.Window <= 0 {
			ds.BusyPercent = 0
		}
		s.PerDevice[d.Name] = ds
		if n > 0 {
			util += pct
			utilDevices++
			s.UtilizationSource = source
			s.UtilizationSamples += n
		}
	}
	if s.Window > 0 {
		s.TimelineBusyPercent = 100 * busy.Seconds() / (s.Window.Seconds() * float64(max(devices, len(a.Devices))))
	}
	if utilDevices > 0 {
		s.UtilizationPercent = util / float64(utilDevices)
	}
}

// measureIsolated proves o.Isolated single-partition jobs one at a time on
// the warm daemon and keeps the median device time per proof (from the
// timeline when o has one, else the prove call's wall time).
func (s *Steady) measureIsolated(ctx context.Context, t Target, o Options, witness [][]byte) error {
	ids := map[string]bool{}
	var walls []time.Duration
	for range o.Isolated {
		job, err := t.Submit(ctx, o.request(witness))
		if err != nil {
			return err
		}
		job, err = t.Wait(ctx, job.ID, nil)
		if err != nil {
			return err
		}
		if job.State != api.JobDone || len(job.Partitions) != 1 {
			return fmt.Errorf("job %s ended %s: %s", job.ID, job.State, job.Error)
		}
		p := job.Partitions[0]
		walls = append(walls, p.ProveEnd.Sub(p.ProveStart))
		ids[job.ID] = true
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	s.IsolatedWall, s.IsolatedProofs = waterfall.Percentile(walls, 50), len(walls)
	s.Isolated = s.IsolatedWall
	if o.TimelinePath == "" {
		return nil
	}
	a, err := readTimeline(ctx, o.TimelinePath, ids, len(ids))
	if err != nil {
		return err
	}
	perProof := map[string]time.Duration{}
	for _, ev := range a.Events() {
		if ev.Job != "" && !waterfall.IsHostPhase(ev.Phase) && ev.Phase != timeline.PhaseUtilization {
			perProof[ev.Job] += ev.DeviceBusy
		}
	}
	var busy []time.Duration
	for _, b := range perProof {
		if b > 0 {
			busy = append(busy, b)
		}
	}
	if len(busy) > 0 {
		sort.Slice(busy, func(i, j int) bool { return busy[i] < busy[j] })
		s.Isolated = waterfall.Percentile(busy, 50)
	}
	return nil
}

// compare fills the isolated rate and the ratio to it.
func (s *Steady) compare(devices int) {
	if s.Isolated <= 0 {
		return
	}
	s.IsolatedProofsPerMinute = float64(devices) * float64(time.Minute) / float64(s.Isolated)
	s.Ratio = s.ProofsPerMinute / s.IsolatedProofsPerMinute
}
