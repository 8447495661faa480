package waterfall

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/zkhost/zkhost/host/timeline"
)

// PhaseReady is a phase Analyze derives: from the end of a partition's staging
// to its dispatch to a device, the time a synthesized partition waited for a
// device slot.
const PhaseReady = "ready_wait"

// phaseKeyLoad is the device-lane phase the daemon records while a proving key
// is loaded on demand before a partition (timeline.PhaseKeyLoad).
const phaseKeyLoad = "key_load"

// hostPhases are the phases that run on the host; every other phase runs in a
// backend, on the device its event's Lane names.
var hostPhases = map[string]bool{
	timeline.PhaseBudgetWait: true,
	timeline.PhaseSynthesis:  true,
	timeline.PhaseStage:      true,
	timeline.PhaseFinalize:   true,
}

// IsHostPhase reports whether phase runs on the host (budget wait, synthesis,
// staging, finalization) rather than in a backend.
func IsHostPhase(phase string) bool { return hostPhases[phase] }

// Cause says what the host was doing while a device sat idle.
type Cause string

// Causes of device idleness, in order of precedence: when several hold at once,
// the first one listed gets the time.
const (
	CauseKeyLoad   Cause = "key_load"  // a proving key was being loaded onto this device
	CauseBackend   Cause = "backend"   // a partition was with this device's backend, but the device was not computing it
	CauseDispatch  Cause = "dispatch"  // a staged partition waited and this device did not take it
	CauseSynthesis Cause = "synthesis" // partitions were being synthesized or staged
	CauseBudget    Cause = "budget"    // partitions waited for the memory budget
	CauseNothing   Cause = "nothing"   // no partition was in the pipeline
)

// Causes lists every Cause in order of precedence.
var Causes = []Cause{CauseKeyLoad, CauseBackend, CauseDispatch, CauseSynthesis, CauseBudget, CauseNothing}

var causeLabels = map[Cause]string{
	CauseKeyLoad:   "key load",
	CauseBackend:   "backend call, device not busy",
	CauseDispatch:  "ready partition not dispatched",
	CauseSynthesis: "waiting on synthesis",
	CauseBudget:    "waiting on budget",
	CauseNothing:   "nothing queued",
}

// Label returns the cause in words, as the gap table shows it.
// Deliberately parallel to sdk's ErrorKind.String: a map lookup with a
// fallback is three lines, not worth a helper shared across the SDK's module
// boundary.
func (c Cause) Label() string {
	if l, ok := causeLabels[c]; ok {
		return l
	}
	return string(c)
}

// Gap is a stretch of time in which a device did no work.
type Gap struct {
	Device     string
	Start, End time.Time
	// Cause is the cause that covers most of the gap.
	Cause Cause
	// ByCause splits the gap's length between causes (only causes with time).
	ByCause map[Cause]time.Duration
}

// Duration returns the gap's length.
func (g Gap) Duration() time.Duration { return g.End.Sub(g.Start) }

// Breakdown returns the gap's causes with their shares, largest first, e.g.
// "waiting on synthesis 80%, waiting on budget 20%"; shares under 0.5% are
// left out.
func (g Gap) Breakdown() string {
	return breakdown(g.ByCause, g.Duration())
}

func breakdown(by map[Cause]time.Duration, whole time.Duration) string {
	type share struct {
		c Cause
		d time.Duration
	}
	var shares []share
	for _, c := range Causes {
		// Shares that would print as 0% are left out.
		if d := by[c]; d > 0 && (whole <= 0 || 200*d >= whole) {
			shares = append(shares, share{c, d})
		}
	}
	sort.SliceStable(shares, func(i, j int) bool { return shares[i].d > shares[j].d })
	parts := make([]string, 0, len(shares))
	for _, s := range shares {
		pct := 0.0
		if whole > 0 {
			pct = 100 * float64(s.d) / float64(whole)
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", s.c.Label(), pct))
	}
	return strings.Join(parts, ", ")
}

// Device is what Analyze found about one device.
type Device struct {
	Name string
	// Busy is the time at least one phase with device-busy time ran on the
	// device: the union of those phases, so partitions in flight together on
	// separate streams are not counted twice (their reported busy times summed
	// would pass the wall time).
	Busy time.Duration
	// BusyPercent is Busy as a share of the timeline's span, 0..100.
	BusyPercent float64
	// Idle is the time no phase with device-busy time ran on the device.
	Idle time.Duration
	// IdleByCause splits Idle between causes.
	IdleByCause map[Cause]time.Duration
	// Gaps lists every idle stretch, longest first.
	Gaps []Gap
	// Partitions counts the partition attempts dispatched to the device.
	Partitions int
	// Utilization is the mean of the device's utilization samples
	// (timeline.PhaseUtilization: NVML's on a GPU) within the span, each
	// weighted by its overlap with the span, 0..100; -1 when there are none.
	// UtilizationSource says what measured it ("nvml").
	Utilization       float64
	UtilizationSource string
	UtilizationCount  int
}

// IdleBreakdown returns the device's idle time split between causes in words.
func (d Device) IdleBreakdown() string { return breakdown(d.IdleByCause, d.Idle) }

// PhaseStats summarizes the durations of one phase over every partition.
type PhaseStats struct {
	Name string
	// Host is true for host phases (and PhaseReady), false for backend phases.
	Host  bool
	Count int
	Total time.Duration
	P50   time.Duration
	P99   time.Duration
	Max   time.Duration
	// DeviceBusy sums the device-busy time reported within the phase.
	DeviceBusy time.Duration
}

// Analysis is what Analyze finds in a timeline.
type Analysis struct {
	// Start and End bound every event of the timeline.
	Start, End time.Time
	// Devices are the devices that ran a phase, by name.
	Devices []Device
	// Phases summarizes every phase that has a duration (dispatch, an instant,
	// is left out; PhaseReady is derived), host phases first.
	Phases []PhaseStats
	// Jobs and Partitions count the distinct jobs and (job, partition) pairs.
	Jobs, Partitions int
	// HandoffBytes is the mean size of the partition files handed to the
	// backends (the stage events' bytes; 0 when none says).
	HandoffBytes uint64

	events []timeline.Event
	// Utilization support: per device, the phases that reported busy time.
	busy map[string][]busyPhase
	// ready holds each partition attempt's wait between staging and dispatch.
	ready []readyWait
	// util holds each device's utilization samples, apart from the events.
	util map[string][]timeline.Event
}

// busyPhase is a phase during which the device reported busy time.
type busyPhase struct {
	s    span
	busy time.Duration
}

type readyWait struct {
	key partKey
	s   span
}

// partKey names one attempt of one partition.
type partKey struct {
	job     string
	part    int
	attempt int
}

// Span returns the timeline's length.
func (a *Analysis) Span() time.Duration { return a.End.Sub(a.Start) }

// Events returns the analysed events, sorted by start time.
func (a *Analysis) Events() []timeline.Event { return a.events }

// Device returns the named device's analysis.
func (a *Analysis) Device(name string) (Device, bool) {
	for _, d := range a.Devices {
		if d.Name == name {
			return d, true
		}
	}
	return Device{}, false
}

// Phase returns the named phase's statistics.
func (a *Analysis) Phase(name string) (PhaseStats, bool) {
	for _, p := range a.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return PhaseStats{}, false
}

// BusyPercent returns the devices' reported busy time as a share of the span
// times the number of devices, 0..100: how much of the hardware was used.
func (a *Analysis) BusyPercent() float64 {
	if len(a.Devices) == 0 || a.Span() <= 0 {
		return 0
	}
	var busy time.Duration
	for _, d := range a.Devices {
		busy += d.Busy
	}
	return 100 * float64(busy) / (float64(a.Span()) * float64(len(a.Devices)))
}

// Utilization returns the named device's busy share in n equal buckets over the
// timeline's span, each 0..1 (capped): a phase's reported busy time is spread
// evenly over the phase.
func (a *Analysis) Utilization(device string, n int) []float64 {
	if n <= 0 {
		return nil
	}
	out := make([]float64, n)
	spanNs := a.End.Sub(a.Start).Nanoseconds()
	if spanNs <= 0 {
		return out
	}
	width := float64(spanNs) / float64(n)
	for _, bp := range a.busy[device] {
		wall := bp.s.len()
		if wall <= 0 {
			continue
		}
		rate := float64(bp.busy) / float64(wall)
		first := int(float64(bp.s.a) / width)
		last := min(n-1, int(float64(bp.s.b)/width))
		for i := max(0, first); i <= last; i++ {
			lo, hi := float64(i)*width, float64(i+1)*width
			ov := min(hi, float64(bp.s.b)) - max(lo, float64(bp.s.a))
			if ov > 0 {
				out[i] += rate * ov / width
			}
		}
	}
	for i := range out {
		out[i] = min(out[i], 1)
	}
	return out
}

// meanUtilization is the mean of device's utilization samples over [from,
// to), each weighted by how much of its period lies inside, with their source
// and how many there were; -1 when none overlaps.
func (a *Analysis) meanUtilization(device string, from, to time.Time) (float64, string, int) {
	var sum, weight float64
	source, n := "", 0
	for _, ev := range a.util[device] {
		lo, hi := ev.Start, ev.End
		if !hi.After(lo) {
			lo = hi.Add(-time.Millisecond) // a sample without a period counts a little
		}
		if hi.After(to) {
			hi = to
		}
		if lo.Before(from) {
			lo = from
		}
		if w := hi.Sub(lo).Seconds(); w > 0 {
			sum += *ev.Utilization * w
			weight += w
			source = ev.Source
			n++
		}
	}
	if weight == 0 {
		return -1, "", 0
	}
	return sum / weight, source, n
}

// UtilizationWindow is device's mean utilization over [from, to) (see
// Device.Utilization), its source and the number of samples; -1 when none.
func (a *Analysis) UtilizationWindow(device string, from, to time.Time) (float64, string, int) {
	return a.meanUtilization(device, from, to)
}

// UtilizationSeries returns device's utilization samples in n equal buckets
// over the span, each 0..1, or -1 for a bucket no sample covers.
func (a *Analysis) UtilizationSeries(device string, n int) []float64 {
	if n <= 0 {
		return nil
	}
	out := make([]float64, n)
	width := a.Span() / time.Duration(n)
	for i := range out {
		out[i] = -1
		if width <= 0 {
			continue
		}
		lo := a.Start.Add(time.Duration(i) * width)
		if pct, _, _ := a.meanUtilization(device, lo, lo.Add(width)); pct >= 0 {
			out[i] = pct / 100
		}
	}
	return out
}

// Analyze checks and analyses a timeline. It returns an error naming the event
// at fault for an event that ends before it starts or has no phase, and for an
// empty timeline.
func Analyze(evs []timeline.Event) (*Analysis, error) {
	if len(evs) == 0 {
		return nil, errors.New("the timeline has no events")
	}
	for i, ev := range evs {
		if ev.Phase == "" {
			return nil, fmt.Errorf("event %d (job %q partition %d) has no phase", i+1, ev.Job, ev.Partition)
		}
		if ev.End.Before(ev.Start) {
			return nil, fmt.Errorf("event %d (job %q partition %d phase %s) ends %s before it starts", i+1, ev.Job, ev.Partition, ev.Phase, ev.Start.Sub(ev.End))
		}
		if ev.DeviceBusy < 0 {
			return nil, fmt.Errorf("event %d (job %q partition %d phase %s) has negative device-busy time", i+1, ev.Job, ev.Partition, ev.Phase)
		}
	}
	// Utilization samples are kept apart: they describe devices, not
	// partitions, and they come all the time, so they bound the span only in a
	// timeline that has nothing else.
	var sorted, samples []timeline.Event
	for _, ev := range evs {
		if ev.Phase == timeline.PhaseUtilization {
			if ev.Utilization == nil {
				return nil, fmt.Errorf("utilization event of %q at %s has no utilization", ev.Lane, ev.End.Format(time.RFC3339Nano))
			}
			samples = append(samples, ev)
			continue
		}
		sorted = append(sorted, ev)
	}
	bounds := sorted
	if len(bounds) == 0 {
		bounds = samples
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start.Before(sorted[j].Start) })
	a := &Analysis{events: sorted, Start: bounds[0].Start, End: bounds[0].End, busy: map[string][]busyPhase{}, util: map[string][]timeline.Event{}}
	for _, ev := range bounds {
		if ev.Start.Before(a.Start) {
			a.Start = ev.Start
		}
		if ev.End.After(a.End) {
			a.End = ev.End
		}
	}
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].End.Before(samples[j].End) })
	for _, ev := range samples {
		a.util[ev.Lane] = append(a.util[ev.Lane], ev)
	}
	off := func(t time.Time) int64 { return t.Sub(a.Start).Nanoseconds() }

	jobs := map[string]bool{}
	parts := map[partKey]bool{}
	var synth, budgetWait []span
	stageEnd := map[partKey]time.Time{}       // by attempt before dispatch
	dispatched := map[partKey]time.Time{}     // by attempt of the dispatch
	callSpan := map[string]map[partKey]span{} // per device, per attempt
	keyLoad := map[string][]span{}
	durations := map[string][]time.Duration{}
	phaseBusy := map[string]time.Duration{}
	devices := map[string]bool{}
	var handoffBytes, handoffs uint64

	for _, ev := range sorted {
		s := span{off(ev.Start), off(ev.End)}
		if ev.Job == "" && ev.Phase == phaseKeyLoad {
			// A key preloaded at the daemon's start: no partition's.
			dev := ev.Lane
			devices[dev] = true
			keyLoad[dev] = append(keyLoad[dev], s)
			durations[ev.Phase] = append(durations[ev.Phase], ev.End.Sub(ev.Start))
			continue
		}
		jobs[ev.Job] = true
		parts[partKey{ev.Job, ev.Partition, 0}] = true
		k := partKey{ev.Job, ev.Partition, ev.Attempt}
		if ev.Phase != timeline.PhaseDispatch {
			durations[ev.Phase] = append(durations[ev.Phase], ev.End.Sub(ev.Start))
			phaseBusy[ev.Phase] += ev.DeviceBusy
		}
		if IsHostPhase(ev.Phase) {
			switch ev.Phase {
			case timeline.PhaseBudgetWait:
				budgetWait = append(budgetWait, s)
			case timeline.PhaseSynthesis:
				synth = append(synth, s)
			case timeline.PhaseStage:
				synth = append(synth, s)
				stageEnd[k] = ev.End
				if ev.Bytes > 0 {
					handoffBytes += ev.Bytes
					handoffs++
				}
			}
			continue
		}
		dev := ev.Lane
		if dev == "" {
			dev = "device"
		}
		devices[dev] = true
		if callSpan[dev] == nil {
			callSpan[dev] = map[partKey]span{}
		}
		if cs, ok := callSpan[dev][k]; ok {
			callSpan[dev][k] = span{min(cs.a, s.a), max(cs.b, s.b)}
		} else {
			callSpan[dev][k] = s
		}
		switch {
		case ev.Phase == timeline.PhaseDispatch:
			if _, ok := dispatched[k]; !ok {
				dispatched[k] = ev.Start
			}
		case ev.Phase == phaseKeyLoad:
			keyLoad[dev] = append(keyLoad[dev], s)
		case ev.DeviceBusy > 0:
			a.busy[dev] = append(a.busy[dev], busyPhase{s: s, busy: ev.DeviceBusy})
		}
	}
	a.Jobs, a.Partitions = len(jobs), len(parts)
	if handoffs > 0 {
		a.HandoffBytes = handoffBytes / handoffs
	}

	// A staged partition is ready from the end of its staging (attempt n) until
	// its dispatch (attempt n+1).
	var ready []span
	for k, end := range stageEnd {
		next := partKey{k.job, k.part, k.attempt + 1}
		if at, ok := dispatched[next]; ok && !at.Before(end) {
			s := span{off(end), off(at)}
			ready = append(ready, s)
			a.ready = append(a.ready, readyWait{key: next, s: s})
			durations[PhaseReady] = append(durations[PhaseReady], at.Sub(end))
		}
	}
	sort.Slice(a.ready, func(i, j int) bool { return a.ready[i].s.a < a.ready[j].s.a })

	synthU, budgetU, readyU := union(synth), union(budgetWait), union(ready)
	lo, hi := int64(0), off(a.End)
	for d := range a.util {
		devices[d] = true // a device with samples and no work was idle all along
	}
	names := make([]string, 0, len(devices))
	for d := range devices {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, name := range names {
		dev := Device{Name: name, IdleByCause: map[Cause]time.Duration{}, Partitions: len(callSpan[name])}
		var busySpans, calls []span
		for _, bp := range a.busy[name] {
			busySpans = append(busySpans, bp.s)
		}
		dev.Busy = time.Duration(total(union(busySpans)))
		for _, cs := range callSpan[name] {
			calls = append(calls, cs)
		}
		if sp := a.Span(); sp > 0 {
			dev.BusyPercent = 100 * float64(dev.Busy) / float64(sp)
		}
		dev.Utilization, dev.UtilizationSource, dev.UtilizationCount = a.meanUtilization(name, a.Start, a.End)
		layers := []struct {
			c Cause
			u []span
		}{
			{CauseKeyLoad, union(keyLoad[name])},
			{CauseBackend, union(calls)},
			{CauseDispatch, readyU},
			{CauseSynthesis, synthU},
			{CauseBudget, budgetU},
		}
		for _, g := range complement(union(busySpans), lo, hi) {
			gap := Gap{
				Device:  name,
				Start:   a.Start.Add(time.Duration(g.a)),
				End:     a.Start.Add(time.Duration(g.b)),
				ByCause: map[Cause]time.Duration{},
			}
			rest := []span{g}
			for _, l := range layers {
				covered := intersect(rest, l.u)
				if n := total(covered); n > 0 {
					gap.ByCause[l.c] = time.Duration(n)
					rest = subtract(rest, l.u)
				}
			}
			if n := total(rest); n > 0 {
				gap.ByCause[CauseNothing] = time.Duration(n)
			}
			for _, c := range Causes {
				if gap.ByCause[c] > gap.ByCause[gap.Cause] {
					gap.Cause = c
				}
			}
			for c, d := range gap.ByCause {
				dev.IdleByCause[c] += d
			}
			dev.Idle += gap.Duration()
			dev.Gaps = append(dev.Gaps, gap)
		}
		sort.SliceStable(dev.Gaps, func(i, j int) bool { return dev.Gaps[i].Duration() > dev.Gaps[j].Duration() })
		a.Devices = append(a.Devices, dev)
	}

	for name, ds := range durations {
		a.Phases = append(a.Phases, phaseStats(name, ds, phaseBusy[name]))
	}
	sort.Slice(a.Phases, func(i, j int) bool {
		pi, pj := a.Phases[i], a.Phases[j]
		if pi.Host != pj.Host {
			return pi.Host
		}
		oi, oj := phaseOrder(pi.Name), phaseOrder(pj.Name)
		if oi != oj {
			return oi < oj
		}
		return pi.Name < pj.Name
	})
	return a, nil
}

// phaseOrder places the phases a partition goes through in that order; other
// backend phases sort by name after the known ones.
func phaseOrder(name string) int {
	order := []string{
		timeline.PhaseBudgetWait, timeline.PhaseSynthesis, timeline.PhaseStage, PhaseReady, timeline.PhaseFinalize,
		phaseKeyLoad, "map", "upload", "ntt", "msm_g1", "msm_g2", "finish", "download",
	}
	for i, n := range order {
		if n == name {
			return i
		}
	}
	return len(order)
}

func phaseStats(name string, ds []time.Duration, busy time.Duration) PhaseStats {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	ps := PhaseStats{Name: name, Host: IsHostPhase(name) || name == PhaseReady, Count: len(ds), DeviceBusy: busy}
	for _, d := range ds {
		ps.Total += d
	}
	ps.P50, ps.P99 = Percentile(ds, 50), Percentile(ds, 99)
	if len(ds) > 0 {
		ps.Max = ds[len(ds)-1]
	}
	return ps
}

// Percentile returns the p-th percentile (nearest rank) of sorted durations, or
// 0 for none.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// BusyWindow is the time device was busy (the union of its phases with
// device-busy time, as Device.Busy) within [from, to).
func (a *Analysis) BusyWindow(device string, from, to time.Time) time.Duration {
	spans := make([]span, 0, len(a.busy[device]))
	for _, bp := range a.busy[device] {
		spans = append(spans, bp.s)
	}
	w := []span{{from.Sub(a.Start).Nanoseconds(), to.Sub(a.Start).Nanoseconds()}}
	return time.Duration(total(intersect(union(spans), w)))
}
