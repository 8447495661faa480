package waterfall

import (
	"time"

	"github.com/zkhost/zkhost/host/timeline"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// ev builds an event from millisecond offsets; busy is in milliseconds too.
func ev(job string, part, attempt int, lane, phase string, start, end, busy int) timeline.Event {
	return timeline.Event{
		Job: job, Partition: part, Attempt: attempt, Class: "normal", Circuit: "chain",
		Lane: lane, Phase: phase, Start: at(start), End: at(end), DeviceBusy: time.Duration(busy) * time.Millisecond,
	}
}

// fixture is a timeline whose gaps are known (milliseconds from its start):
//
// dev0, one partition in flight at a time:
//
//	busy 500-1500 (A), 1900-2600 (B), 2950-3400 (C), 4620-5000 (D)
//	gap     0- 500  500 ms: A is being synthesized        -> synthesis
//	gap  1500-1900  400 ms: B waits for budget (300 ms), then synthesizes (100 ms) -> budget
//	gap  2600-2950  350 ms: C's key is being loaded       -> key load
//	gap  3400-4620 1220 ms: nothing until D arrives at 4400 (1000 ms), then its synthesis (220 ms) -> nothing queued
//	gap  5000-5030   30 ms: only finalization             -> nothing queued
//
// dev1:
//
//	busy 700-5000 (F)
//	gap     0- 700  700 ms: F synthesized (0-100), then mapped by the backend without the device (100-700) -> backend
//	gap  5000-5030   30 ms -> nothing queued
func fixture() []timeline.Event {
	return []timeline.Event{
		// A: synthesized on synth0, proved on dev0.
		ev("j1", 0, 0, "synth0", timeline.PhaseSynthesis, 0, 480, 0),
		ev("j1", 0, 0, "synth0", timeline.PhaseStage, 480, 500, 0),
		ev("j1", 0, 1, "dev0", timeline.PhaseDispatch, 500, 500, 0),
		ev("j1", 0, 1, "dev0", "msm_g1", 500, 1500, 1000),
		ev("j1", 0, 1, "", timeline.PhaseFinalize, 1500, 1520, 0),
		// B: waits for the budget on synth1.
		ev("j1", 1, 0, "synth1", timeline.PhaseBudgetWait, 0, 1800, 0),
		ev("j1", 1, 0, "synth1", timeline.PhaseSynthesis, 1800, 1850, 0),
		ev("j1", 1, 0, "synth1", timeline.PhaseStage, 1850, 1900, 0),
		ev("j1", 1, 1, "dev0", timeline.PhaseDispatch, 1900, 1900, 0),
		ev("j1", 1, 1, "dev0", "ntt", 1900, 2600, 700),
		ev("j1", 1, 1, "", timeline.PhaseFinalize, 2600, 2620, 0),
		// C: staged early, waits for dev0, whose key is then loaded.
		ev("j2", 0, 0, "synth0", timeline.PhaseSynthesis, 1900, 2300, 0),
		ev("j2", 0, 0, "synth0", timeline.PhaseStage, 2300, 2320, 0),
		ev("j2", 0, 1, "dev0", timeline.PhaseDispatch, 2600, 2600, 0),
		ev("j2", 0, 1, "dev0", phaseKeyLoad, 2600, 2950, 0),
		ev("j2", 0, 1, "dev0", "msm_g1", 2950, 3400, 450),
		ev("j2", 0, 1, "", timeline.PhaseFinalize, 3400, 3420, 0),
		// D: arrives after a quiet second.
		ev("j3", 0, 0, "synth0", timeline.PhaseBudgetWait, 4400, 4400, 0),
		ev("j3", 0, 0, "synth0", timeline.PhaseSynthesis, 4400, 4600, 0),
		ev("j3", 0, 0, "synth0", timeline.PhaseStage, 4600, 4620, 0),
		ev("j3", 0, 1, "dev0", timeline.PhaseDispatch, 4620, 4620, 0),
		ev("j3", 0, 1, "dev0", "msm_g1", 4620, 5000, 380),
		ev("j3", 0, 1, "", timeline.PhaseFinalize, 5000, 5020, 0),
		// F: on dev1, mapped by its backend before the device starts.
		ev("j4", 0, 0, "synth2", timeline.PhaseSynthesis, 0, 90, 0),
		ev("j4", 0, 0, "synth2", timeline.PhaseStage, 90, 100, 0),
		ev("j4", 0, 1, "dev1", timeline.PhaseDispatch, 100, 100, 0),
		ev("j4", 0, 1, "dev1", "map", 100, 700, 0),
		ev("j4", 0, 1, "dev1", "msm_g1", 700, 5000, 4300),
		ev("j4", 0, 1, "", timeline.PhaseFinalize, 5000, 5030, 0),
	}
}

// wantGap is a gap the fixture must produce, in milliseconds.
type wantGap struct {
	device     string
	start, len int
	cause      Cause
}

// fixtureGaps lists the fixture's gaps per device, longest first.
var fixtureGaps = []wantGap{
	{"dev0", 3400, 1220, CauseNothing},
	{"dev0", 0, 500, CauseSynthesis},
	{"dev0", 1500, 400, CauseBudget},
	{"dev0", 2600, 350, CauseKeyLoad},
	{"dev0", 5000, 30, CauseNothing},
	{"dev1", 0, 700, CauseBackend},
	{"dev1", 5000, 30, CauseNothing},
}
