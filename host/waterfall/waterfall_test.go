package waterfall

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/timeline"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestAnalyzeGaps(t *testing.T) {
	a, err := Analyze(fixture())
	if err != nil {
		t.Fatal(err)
	}
	if a.Span() != ms(5030) {
		t.Errorf("span %v, want 5.03s", a.Span())
	}
	if a.Jobs != 4 || a.Partitions != 5 {
		t.Errorf("jobs %d partitions %d, want 4 and 5", a.Jobs, a.Partitions)
	}
	var got []wantGap
	for _, d := range a.Devices {
		for _, g := range d.Gaps {
			got = append(got, wantGap{d.Name, int(g.Start.Sub(t0).Milliseconds()), int(g.Duration().Milliseconds()), g.Cause})
		}
	}
	if !reflect.DeepEqual(got, fixtureGaps) {
		t.Errorf("gaps:\n got %v\nwant %v", got, fixtureGaps)
	}
	dev0, ok := a.Device("dev0")
	if !ok {
		t.Fatal("no dev0")
	}
	// The budget gap splits 300 ms budget, 100 ms synthesis.
	g := dev0.Gaps[2]
	if g.ByCause[CauseBudget] != ms(300) || g.ByCause[CauseSynthesis] != ms(100) || len(g.ByCause) != 2 {
		t.Errorf("budget gap by cause: %v", g.ByCause)
	}
	if want := "waiting on budget 75%, waiting on synthesis 25%"; g.Breakdown() != want {
		t.Errorf("breakdown %q, want %q", g.Breakdown(), want)
	}
	wantIdle := map[Cause]time.Duration{CauseNothing: ms(1030), CauseSynthesis: ms(500 + 100 + 220), CauseBudget: ms(300), CauseKeyLoad: ms(350)}
	if !reflect.DeepEqual(dev0.IdleByCause, wantIdle) {
		t.Errorf("dev0 idle by cause %v, want %v", dev0.IdleByCause, wantIdle)
	}
	if dev0.Idle != ms(2500) || dev0.Busy != ms(1000+700+450+380) || dev0.Partitions != 4 {
		t.Errorf("dev0 idle %v busy %v partitions %d", dev0.Idle, dev0.Busy, dev0.Partitions)
	}
	if want := 100 * 2530.0 / 5030; math.Abs(dev0.BusyPercent-want) > 1e-9 {
		t.Errorf("dev0 busy %.3f%%, want %.3f%%", dev0.BusyPercent, want)
	}
	if want := 100 * (2530.0 + 4300) / (2 * 5030); math.Abs(a.BusyPercent()-want) > 1e-9 {
		t.Errorf("overall busy %.3f%%, want %.3f%%", a.BusyPercent(), want)
	}
}

func TestAnalyzeDispatchCause(t *testing.T) {
	// dev0 restarts (no events) while a staged partition waits 200-600; dev1 is
	// busy with another partition, so the wait is a dispatch problem of dev0.
	evs := []timeline.Event{
		ev("j", 0, 0, "synth0", timeline.PhaseSynthesis, 0, 180, 0),
		ev("j", 0, 0, "synth0", timeline.PhaseStage, 180, 200, 0),
		ev("j", 0, 1, "dev0", timeline.PhaseDispatch, 600, 600, 0),
		ev("j", 0, 1, "dev0", "msm_g1", 600, 1000, 400),
		ev("k", 0, 1, "dev1", "msm_g1", 0, 1000, 1000),
	}
	a, err := Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := a.Device("dev0")
	if len(d.Gaps) != 1 {
		t.Fatalf("gaps %+v", d.Gaps)
	}
	g := d.Gaps[0]
	if g.Cause != CauseDispatch || g.ByCause[CauseDispatch] != ms(400) || g.ByCause[CauseSynthesis] != ms(200) {
		t.Errorf("gap %+v", g)
	}
	ready, ok := a.Phase(PhaseReady)
	if !ok || ready.Count != 1 || ready.P50 != ms(400) {
		t.Errorf("ready phase %+v", ready)
	}
}

func TestAnalyzePhases(t *testing.T) {
	a, err := Analyze(fixture())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range a.Phases {
		names = append(names, p.Name)
	}
	want := []string{"budget_wait", "synthesis", "stage", PhaseReady, "finalize", "key_load", "map", "ntt", "msm_g1"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("phases %v, want %v", names, want)
	}
	msm, _ := a.Phase("msm_g1")
	// msm_g1 durations: 380, 450, 1000, 4300.
	if msm.Count != 4 || msm.P50 != ms(450) || msm.P99 != ms(4300) || msm.Max != ms(4300) || msm.Total != ms(6130) || msm.DeviceBusy != ms(6130) || msm.Host {
		t.Errorf("msm_g1 %+v", msm)
	}
	synth, _ := a.Phase("synthesis")
	if synth.Count != 5 || !synth.Host {
		t.Errorf("synthesis %+v", synth)
	}
	ready, _ := a.Phase(PhaseReady)
	if ready.Count != 5 || ready.Max != ms(280) {
		t.Errorf("ready %+v", ready)
	}
	if _, ok := a.Phase(timeline.PhaseDispatch); ok {
		t.Error("dispatch, an instant, has statistics")
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {99, 10}, {10, 1}, {0, 1}, {100, 10}, {91, 10}, {90, 9}} {
		if got := Percentile(ds, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestUtilization(t *testing.T) {
	// One phase over the second half with half its time busy.
	evs := []timeline.Event{
		ev("j", 0, 0, "synth0", timeline.PhaseSynthesis, 0, 1000, 0),
		ev("j", 0, 1, "dev0", "ntt", 1000, 2000, 500),
	}
	a, err := Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	got := a.Utilization("dev0", 4)
	want := []float64{0, 0, 0.5, 0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("utilization %v, want %v", got, want)
		}
	}
	if u := a.Utilization("nope", 3); len(u) != 3 || u[0] != 0 {
		t.Errorf("unknown device utilization %v", u)
	}
}

func TestAnalyzeRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		evs  []timeline.Event
		want string
	}{
		{"empty", nil, "no events"},
		{"backwards", []timeline.Event{ev("j", 3, 0, "dev0", "ntt", 10, 5, 0)}, `event 1 (job "j" partition 3 phase ntt) ends 5ms before it starts`},
		{"no phase", []timeline.Event{ev("j", 0, 0, "dev0", "", 0, 5, 0)}, "has no phase"},
		{"negative busy", []timeline.Event{ev("j", 0, 0, "dev0", "ntt", 0, 5, -1)}, "negative device-busy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Analyze(tc.evs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestSpans(t *testing.T) {
	u := union([]span{{5, 7}, {0, 2}, {1, 3}, {7, 8}, {9, 9}})
	if want := []span{{0, 3}, {5, 8}}; !reflect.DeepEqual(u, want) {
		t.Fatalf("union %v, want %v", u, want)
	}
	if got, want := complement(u, -1, 10), []span{{-1, 0}, {3, 5}, {8, 10}}; !reflect.DeepEqual(got, want) {
		t.Errorf("complement %v, want %v", got, want)
	}
	if got, want := complement(u, 1, 6), []span{{3, 5}}; !reflect.DeepEqual(got, want) {
		t.Errorf("complement inside %v, want %v", got, want)
	}
	parts := []span{{2, 6}}
	if got, want := intersect(parts, u), []span{{2, 3}, {5, 6}}; !reflect.DeepEqual(got, want) {
		t.Errorf("intersect %v, want %v", got, want)
	}
	if got, want := subtract(parts, u), []span{{3, 5}}; !reflect.DeepEqual(got, want) {
		t.Errorf("subtract %v, want %v", got, want)
	}
	if total(u) != 6 {
		t.Errorf("total %d", total(u))
	}
}

func TestWriteHostLanesWithoutWorkerIDs(t *testing.T) {
	// Timelines from daemons that record no synthesis worker pack host phases
	// into rows of one "synthesis" lane.
	var evs []timeline.Event
	for _, e := range fixture() {
		if IsHostPhase(e.Phase) {
			e.Lane = ""
		}
		evs = append(evs, e)
	}
	a, err := Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	v := buildView(a, Options{})
	var lanes []string
	for _, l := range v.Lanes {
		lanes = append(lanes, l.Kind+":"+l.Name)
	}
	if want := []string{"synthesis:synthesis", "device:dev0", "device:dev1", "finalize:finalize"}; !reflect.DeepEqual(lanes, want) {
		t.Fatalf("lanes %v, want %v", lanes, want)
	}
	// Up to three partitions were in synthesis at once (A, B, F): three rows.
	if h := v.Lanes[0].H; h != 2*lanePad+3*rowHeight+2*rowGap {
		t.Errorf("synthesis lane height %d, want three rows", h)
	}
}

func TestWriteEscapes(t *testing.T) {
	evs := fixture()
	evs[0].Job = `<script>alert("x")</script>`
	a, err := Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, a, Options{Title: "t & <b>"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, `<script>alert`) || strings.Contains(page, "<b>") {
		t.Error("job id or title not escaped")
	}
	for _, banned := range []string{"http://", "https://", "src=", "<link"} {
		if banned == "http://" {
			// The SVG namespace is the one URL allowed.
			page = strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
		}
		if strings.Contains(page, banned) {
			t.Errorf("page is not self-contained: it contains %q", banned)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"dev2", "dev10", true}, {"dev10", "dev2", false}, {"dev1", "dev1", false}, {"a", "b", true}, {"synth9", "synth10", true}, {"dev", "dev0", true}} {
		if got := naturalLess(tc.a, tc.b); got != tc.want {
			t.Errorf("naturalLess(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

// TestBusyIsAUnion: two partitions in flight together on one device (separate
// streams) report overlapping busy phases; the device is busy for their union,
// never more than the wall time.
func TestBusyIsAUnion(t *testing.T) {
	evs := []timeline.Event{
		ev("j", 0, 1, "dev0", "msm_g1", 0, 600, 600),
		ev("j", 1, 1, "dev0", "msm_g1", 200, 800, 600),
		ev("j", 2, 1, "dev0", "msm_g1", 900, 1000, 100),
	}
	a, err := Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	d := a.Devices[0]
	if d.Busy != 900*time.Millisecond || d.BusyPercent != 90 {
		t.Fatalf("busy %v (%.1f%%), want 900ms (90%%): the union of 0-800 and 900-1000 over 1000 ms", d.Busy, d.BusyPercent)
	}
	if d.Idle != 100*time.Millisecond {
		t.Fatalf("idle %v, want 100ms", d.Idle)
	}
}

// sample is a utilization event of lane ending at end ms after t0, over
// period ms.
func sample(lane string, end, period int, pct float64) timeline.Event {
	return timeline.Event{Lane: lane, Phase: timeline.PhaseUtilization, Start: at(end - period), End: at(end), Utilization: &pct, Source: "nvml"}
}

func TestAnalyzeUtilizationSamples(t *testing.T) {
	evs := fixture()
	// dev0: 100% for the first second, 50% for the next 4.03 s, samples
	// running on past the span (they must not stretch it). dev2 only sampled:
	// idle all along, and listed.
	for end := 100; end <= 6000; end += 100 {
		pct := 50.0
		if end <= 1000 {
			pct = 100
		}
		evs = append(evs, sample("dev0", end, 100, pct), sample("dev2", end, 100, 0))
	}
	a, err := Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	if a.Span() != ms(5030) {
		t.Fatalf("span %v, want 5.03s: samples must not stretch it", a.Span())
	}
	dev0, _ := a.Device("dev0")
	if want := (100*1.0 + 50*4.03) / 5.03; math.Abs(dev0.Utilization-want) > 1e-9 || dev0.UtilizationSource != "nvml" || dev0.UtilizationCount != 51 {
		t.Errorf("dev0 utilization %.4f%% (%s, %d samples), want %.4f%% (nvml, 51)", dev0.Utilization, dev0.UtilizationSource, dev0.UtilizationCount, want)
	}
	if dev1, _ := a.Device("dev1"); dev1.Utilization != -1 || dev1.UtilizationCount != 0 {
		t.Errorf("dev1 has no samples, got utilization %v (%d)", dev1.Utilization, dev1.UtilizationCount)
	}
	dev2, ok := a.Device("dev2")
	if !ok || dev2.Utilization != 0 || dev2.Partitions != 0 || dev2.Busy != 0 {
		t.Errorf("dev2 (sampled, idle): %+v, present %v", dev2, ok)
	}
	if got, _, n := a.UtilizationWindow("dev0", at(0), at(1000)); math.Abs(got-100) > 1e-9 || n != 10 {
		t.Errorf("dev0 over its first second: %v%% from %d samples, want 100%% from 10", got, n)
	}
	series := a.UtilizationSeries("dev1", 4)
	for _, u := range series {
		if u != -1 {
			t.Fatalf("dev1 series %v, want -1 everywhere (no samples)", series)
		}
	}
	var page bytes.Buffer
	if err := Write(&page, a, Options{Title: "u"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`class="nvml" data-device="dev0"`, "nvml 60%", "59.9% (nvml, 51 samples)"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Only samples: the span is theirs.
	a, err = Analyze([]timeline.Event{sample("dev0", 100, 100, 30), sample("dev0", 200, 100, 50)})
	if err != nil || a.Span() != ms(200) || a.Devices[0].Utilization != 40 {
		t.Fatalf("samples only: %v, span %v, devices %+v", err, a.Span(), a.Devices)
	}
	if _, err := Analyze([]timeline.Event{{Lane: "dev0", Phase: timeline.PhaseUtilization, Start: at(0), End: at(1)}}); err == nil || !strings.Contains(err.Error(), "has no utilization") {
		t.Fatalf("a sample without a value: %v, want an error", err)
	}
}

// TestHandoffBytes: the mean partition file size comes from the stage events
// that carry one; events without bytes (older timelines) do not count.
func TestHandoffBytes(t *testing.T) {
	evs := []timeline.Event{
		ev("j", 0, 0, "", timeline.PhaseSynthesis, 0, 10, 0),
		ev("j", 0, 0, "", timeline.PhaseStage, 10, 11, 0),
		ev("j", 1, 0, "", timeline.PhaseStage, 12, 13, 0),
		ev("j", 2, 0, "", timeline.PhaseStage, 14, 15, 0),
	}
	evs[1].Bytes, evs[2].Bytes = 1000, 3000
	a, err := Analyze(evs)
	if err != nil {
		t.Fatal(err)
	}
	if a.HandoffBytes != 2000 {
		t.Fatalf("HandoffBytes = %d, want 2000", a.HandoffBytes)
	}
}
