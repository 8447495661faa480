package waterfall

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/zkhost/zkhost/host/timeline"
)

// Options shape the page Write renders.
type Options struct {
	// Title heads the page; empty means "zkhost waterfall".
	Title string
	// Source names the timeline file, shown under the title.
	Source string
	// Width is the plot's width in pixels; 0 means 1200.
	Width int
	// MaxGaps is how many of each device's largest gaps the table lists; 0
	// means 10.
	MaxGaps int
}

// Page geometry, in pixels.
const (
	labelWidth  = 150
	rightMargin = 30
	axisHeight  = 28
	rowHeight   = 12
	rowGap      = 2
	lanePad     = 5
	curveHeight = 40
	minBarWidth = 0.5
)

// phaseColors are the colours of the phases every backend and the host use;
// other phases get one of extraColors by a hash of their name.
var phaseColors = map[string]string{
	timeline.PhaseBudgetWait: "#c9c9c9",
	timeline.PhaseSynthesis:  "#4e79a7",
	timeline.PhaseStage:      "#76b7b2",
	timeline.PhaseFinalize:   "#8c8c8c",
	timeline.PhaseDispatch:   "#000000",
	phaseKeyLoad:             "#ff9da7",
	"map":                    "#edc948",
	"upload":                 "#f28e2b",
	"ntt":                    "#59a14f",
	"msm_g1":                 "#e15759",
	"msm_g2":                 "#b07aa1",
	"finish":                 "#9c755f",
	"download":               "#d4a6c8",
}

var extraColors = []string{"#86bcb6", "#f1ce63", "#499894", "#d37295", "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d"}

func phaseColor(phase string) string {
	if c, ok := phaseColors[phase]; ok {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(phase))
	return extraColors[h.Sum32()%uint32(len(extraColors))]
}

// causeColors colour the gap causes in the tables.
var causeColors = map[Cause]string{
	CauseKeyLoad:   "#ff9da7",
	CauseBackend:   "#edc948",
	CauseDispatch:  "#f28e2b",
	CauseSynthesis: "#4e79a7",
	CauseBudget:    "#c9c9c9",
	CauseNothing:   "#ffffff",
}

// laneKind orders lanes top to bottom in the order work flows.
type laneKind int

const (
	kindSynthesis laneKind = iota
	kindDevice
	kindFinalize
)

// Write renders the page for a to w: a self-contained HTML document with no
// external assets.
func Write(w io.Writer, a *Analysis, opts Options) error {
	if a == nil {
		return fmt.Errorf("waterfall: no analysis to render")
	}
	v := buildView(a, opts)
	return pageTemplate.Execute(w, v)
}

// view is what the template renders; every number is already formatted.
type view struct {
	Title, Source   string
	Summary         string
	Width, Height   int
	PlotX, PlotW    int
	Ticks           []tick
	Lanes           []laneView
	Legend          []legendItem
	CauseLegend     []legendItem
	Devices         []deviceRow
	Gaps            []gapRow
	MaxGaps         int
	Phases          []phaseRow
	TimelineStartUT string
}

type tick struct {
	X     string
	Label string
}

type laneView struct {
	Name, Kind string
	Y, H       int
	LabelY     int
	Bars       []barView
	Ticks      []barView // dispatch instants
	Gaps       []gapMark
	Curve      *curveView
	// Util is the device's utilization samples (NVML's on a GPU) as a
	// curve under Curve, when the timeline has them.
	Util   *curveView
	Stripe bool
}

type barView struct {
	X, Y, W, H string
	Color      string
	Part       string
	Title      string
}

type gapMark struct {
	ID         string
	X, Y, W, H string
}

type curveView struct {
	Y, H   int
	Path   string
	Label  string
	MidY   int
	BaseY  int
	LabelY int
}

type legendItem struct {
	Name, Color string
}

type deviceRow struct {
	Name, Partitions, Busy, BusyPercent, Utilization, Idle, Breakdown string
}

type gapRow struct {
	ID, Device, Cause, CauseLabel, Color string
	Start, Duration, Breakdown           string
	StartMs, DurationMs                  int64
	Rank                                 int
}

type phaseRow struct {
	Name, Where, Count, P50, P99, Max, Total, Busy string
}

// utilizationCurve draws device's utilization samples in n buckets as a
// filled step curve whose top edge is at y; buckets with no sample sit at
// zero.
func utilizationCurve(a *Analysis, name string, d Device, y, n, width int) *curveView {
	base := float64(y + curveHeight - 4)
	scale := float64(curveHeight - 8)
	var b strings.Builder
	fmt.Fprintf(&b, "M%s %s", f1(float64(labelWidth)), f1(base))
	for i, u := range a.UtilizationSeries(name, n) {
		x0 := float64(labelWidth) + float64(i)*float64(width)/float64(n)
		x1 := float64(labelWidth) + float64(i+1)*float64(width)/float64(n)
		yy := base - max(u, 0)*scale
		fmt.Fprintf(&b, " L%s %s L%s %s", f1(x0), f1(yy), f1(x1), f1(yy))
	}
	fmt.Fprintf(&b, " L%s %s Z", f1(float64(labelWidth+width)), f1(base))
	return &curveView{
		Y: y, H: curveHeight, Path: b.String(), BaseY: int(base), MidY: int(base - scale/2),
		LabelY: y + curveHeight/2 + 4, Label: fmt.Sprintf("%s %.0f%%", d.UtilizationSource, d.Utilization),
	}
}

// laneGroup is one partition attempt's events in one lane: packed as a unit
// into a row, so a partition's phases sit on one line.
type laneGroup struct {
	key    partKey
	s      span
	events []timeline.Event
}

type laneBuild struct {
	kind   laneKind
	name   string
	groups map[partKey]*laneGroup
}

func buildView(a *Analysis, opts Options) view {
	if opts.Title == "" {
		opts.Title = "zkhost waterfall"
	}
	if opts.Width <= 0 {
		opts.Width = 1200
	}
	if opts.MaxGaps <= 0 {
		opts.MaxGaps = 10
	}
	v := view{Title: opts.Title, Source: opts.Source, PlotX: labelWidth, PlotW: opts.Width, MaxGaps: opts.MaxGaps}
	v.Width = labelWidth + opts.Width + rightMargin
	spanNs := float64(a.Span().Nanoseconds())
	if spanNs <= 0 {
		spanNs = 1
	}
	xOf := func(t time.Time) float64 {
		return float64(labelWidth) + float64(t.Sub(a.Start).Nanoseconds())/spanNs*float64(opts.Width)
	}
	off := func(t time.Time) int64 { return t.Sub(a.Start).Nanoseconds() }

	// Group events into lanes.
	lanes := map[string]*laneBuild{}
	laneFor := func(kind laneKind, name string) *laneBuild {
		id := fmt.Sprintf("%d/%s", kind, name)
		lb, ok := lanes[id]
		if !ok {
			lb = &laneBuild{kind: kind, name: name, groups: map[partKey]*laneGroup{}}
			lanes[id] = lb
		}
		return lb
	}
	phasesSeen := map[string]bool{}
	for _, ev := range a.events {
		phasesSeen[ev.Phase] = true
		var lb *laneBuild
		switch {
		case ev.Phase == timeline.PhaseFinalize:
			lb = laneFor(kindFinalize, "finalize")
		case IsHostPhase(ev.Phase):
			name := ev.Lane
			if name == "" {
				name = "synthesis"
			}
			lb = laneFor(kindSynthesis, name)
		default:
			name := ev.Lane
			if name == "" {
				name = "device"
			}
			lb = laneFor(kindDevice, name)
		}
		k := partKey{ev.Job, ev.Partition, ev.Attempt}
		if ev.Job == "" {
			k.attempt = -1000 - len(lb.groups) // a preload: a group of its own
		}
		if IsHostPhase(ev.Phase) && ev.Phase != timeline.PhaseFinalize {
			// Synthesis phases carry the attempt count before the dispatch; one
			// group per partition attempt either way.
			k.attempt = -1 - ev.Attempt
		}
		g, ok := lb.groups[k]
		s := span{off(ev.Start), off(ev.End)}
		if !ok {
			g = &laneGroup{key: k, s: s}
			lb.groups[k] = g
		}
		g.s = span{min(g.s.a, s.a), max(g.s.b, s.b)}
		g.events = append(g.events, ev)
	}
	ordered := make([]*laneBuild, 0, len(lanes))
	for _, lb := range lanes {
		ordered = append(ordered, lb)
	}
	sort.Slice(ordered, func(i, j int) bool {
		if ordered[i].kind != ordered[j].kind {
			return ordered[i].kind < ordered[j].kind
		}
		return naturalLess(ordered[i].name, ordered[j].name)
	})

	// Top gaps per device, for the table and the marks on the lanes.
	gapIDs := map[string][]gapRow{}
	for _, d := range a.Devices {
		for i, g := range d.Gaps {
			if i >= opts.MaxGaps {
				break
			}
			row := gapRow{
				ID: fmt.Sprintf("gap-%s-%d", sanitizeID(d.Name), i+1), Device: d.Name, Rank: i + 1,
				Cause: string(g.Cause), CauseLabel: g.Cause.Label(), Color: causeColors[g.Cause],
				Start: formatSeconds(g.Start.Sub(a.Start)), Duration: formatDuration(g.Duration()),
				Breakdown: g.Breakdown(), StartMs: g.Start.Sub(a.Start).Milliseconds(), DurationMs: g.Duration().Milliseconds(),
			}
			gapIDs[d.Name] = append(gapIDs[d.Name], row)
			v.Gaps = append(v.Gaps, row)
		}
	}
	gapsByName := map[string]Device{}
	for _, d := range a.Devices {
		gapsByName[d.Name] = d
	}

	y := axisHeight
	for li, lb := range ordered {
		groups := make([]*laneGroup, 0, len(lb.groups))
		for _, g := range lb.groups {
			groups = append(groups, g)
		}
		sort.Slice(groups, func(i, j int) bool {
			if groups[i].s.a != groups[j].s.a {
				return groups[i].s.a < groups[j].s.a
			}
			return groups[i].s.b < groups[j].s.b
		})
		// Greedy packing: each group takes the first row free at its start.
		var rowEnd []int64
		rowOf := make([]int, len(groups))
		for gi, g := range groups {
			r := -1
			for ri, end := range rowEnd {
				if end <= g.s.a {
					r = ri
					break
				}
			}
			if r < 0 {
				r = len(rowEnd)
				rowEnd = append(rowEnd, 0)
			}
			rowEnd[r] = g.s.b
			rowOf[gi] = r
		}
		rows := max(1, len(rowEnd))
		lh := 2*lanePad + rows*rowHeight + (rows-1)*rowGap
		kind := map[laneKind]string{kindSynthesis: "synthesis", kindDevice: "device", kindFinalize: "finalize"}[lb.kind]
		lv := laneView{Name: lb.name, Kind: kind, Y: y, H: lh, LabelY: y + lh/2 + 4, Stripe: li%2 == 1}
		for gi, g := range groups {
			rowY := y + lanePad + rowOf[gi]*(rowHeight+rowGap)
			part := fmt.Sprintf("%s/%d", g.key.job, partOf(g.key))
			for _, ev := range g.events {
				x := xOf(ev.Start)
				if ev.Phase == timeline.PhaseDispatch {
					lv.Ticks = append(lv.Ticks, barView{
						X: f1(x), Y: fmt.Sprint(rowY - 1), H: fmt.Sprint(rowY + rowHeight + 1), Part: part,
						Title: fmt.Sprintf("dispatch of job %s partition %d (attempt %d) at %s", ev.Job, ev.Partition, ev.Attempt, formatSeconds(ev.Start.Sub(a.Start))),
					})
					continue
				}
				w := math.Max(minBarWidth, xOf(ev.End)-x)
				lv.Bars = append(lv.Bars, barView{
					X: f1(x), Y: fmt.Sprint(rowY), W: f1(w), H: fmt.Sprint(rowHeight),
					Color: phaseColor(ev.Phase), Part: part, Title: barTitle(ev, a.Start),
				})
			}
		}
		if lb.kind == kindDevice {
			for _, gr := range gapIDs[lb.name] {
				d := gapsByName[lb.name]
				g := d.Gaps[gr.Rank-1]
				x := xOf(g.Start)
				lv.Gaps = append(lv.Gaps, gapMark{
					ID: gr.ID, X: f1(x), Y: fmt.Sprint(y + 1), W: f1(math.Max(minBarWidth, xOf(g.End)-x)), H: fmt.Sprint(lh - 2),
				})
			}
			// The utilization curve sits under its device's lane.
			cy := y + lh
			n := max(1, opts.Width/3)
			util := a.Utilization(lb.name, n)
			var b strings.Builder
			base := float64(cy + curveHeight - 4)
			scale := float64(curveHeight - 8)
			fmt.Fprintf(&b, "M%s %s", f1(float64(labelWidth)), f1(base))
			for i, u := range util {
				x0 := float64(labelWidth) + float64(i)*float64(opts.Width)/float64(n)
				x1 := float64(labelWidth) + float64(i+1)*float64(opts.Width)/float64(n)
				yy := base - u*scale
				fmt.Fprintf(&b, " L%s %s L%s %s", f1(x0), f1(yy), f1(x1), f1(yy))
			}
			fmt.Fprintf(&b, " L%s %s Z", f1(float64(labelWidth+opts.Width)), f1(base))
			d := gapsByName[lb.name]
			lv.Curve = &curveView{
				Y: cy, H: curveHeight, Path: b.String(), BaseY: int(base), MidY: int(base - scale/2),
				LabelY: cy + curveHeight/2 + 4, Label: fmt.Sprintf("busy %.0f%%", d.BusyPercent),
			}
			lh += curveHeight
			if d.UtilizationCount > 0 {
				lv.Util = utilizationCurve(a, lb.name, d, y+lh, n, opts.Width)
				lh += curveHeight
			}
		}
		v.Lanes = append(v.Lanes, lv)
		y += lh + 2
	}
	v.Height = y + 4

	// Axis ticks at a round step giving about ten ticks.
	step := niceStep(a.Span(), 10)
	for t := time.Duration(0); t <= a.Span(); t += step {
		v.Ticks = append(v.Ticks, tick{X: f1(xOf(a.Start.Add(t))), Label: formatSeconds(t)})
	}

	// Legend: the phases present, in pipeline order.
	var names []string
	for p := range phasesSeen {
		names = append(names, p)
	}
	sort.Slice(names, func(i, j int) bool {
		oi, oj := phaseOrder(names[i]), phaseOrder(names[j])
		if oi != oj {
			return oi < oj
		}
		return names[i] < names[j]
	})
	for _, p := range names {
		v.Legend = append(v.Legend, legendItem{Name: p, Color: phaseColor(p)})
	}
	for _, c := range Causes {
		v.CauseLegend = append(v.CauseLegend, legendItem{Name: c.Label(), Color: causeColors[c]})
	}

	for _, d := range a.Devices {
		v.Devices = append(v.Devices, deviceRow{
			Name: d.Name, Partitions: fmt.Sprint(d.Partitions), Busy: formatDuration(d.Busy),
			BusyPercent: fmt.Sprintf("%.1f%%", d.BusyPercent), Idle: formatDuration(d.Idle), Breakdown: d.IdleBreakdown(),
			Utilization: "n/a",
		})
		if d.UtilizationCount > 0 {
			v.Devices[len(v.Devices)-1].Utilization = fmt.Sprintf("%.1f%% (%s, %d samples)", d.Utilization, d.UtilizationSource, d.UtilizationCount)
		}
	}
	for _, p := range a.Phases {
		where := "device"
		if p.Host {
			where = "host"
		}
		busy := ""
		if p.DeviceBusy > 0 {
			busy = formatDuration(p.DeviceBusy)
		}
		v.Phases = append(v.Phases, phaseRow{
			Name: p.Name, Where: where, Count: fmt.Sprint(p.Count), P50: formatDuration(p.P50), P99: formatDuration(p.P99),
			Max: formatDuration(p.Max), Total: formatDuration(p.Total), Busy: busy,
		})
	}
	v.Summary = fmt.Sprintf("%s from %s: %s, %s, %s, devices busy %.1f%% of the time",
		formatDuration(a.Span()), a.Start.Format(time.RFC3339), plural(a.Jobs, "job"), plural(a.Partitions, "partition"),
		plural(len(a.Devices), "device"), a.BusyPercent())
	return v
}

func partOf(k partKey) int { return k.part }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func barTitle(ev timeline.Event, t0 time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: job %s partition %d attempt %d", ev.Phase, ev.Job, ev.Partition, ev.Attempt)
	if ev.Circuit != "" {
		fmt.Fprintf(&b, " (%s", ev.Circuit)
		if ev.Class != "" {
			fmt.Fprintf(&b, ", %s", ev.Class)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "\n%s → %s, %s", formatSeconds(ev.Start.Sub(t0)), formatSeconds(ev.End.Sub(t0)), formatDuration(ev.End.Sub(ev.Start)))
	if ev.DeviceBusy > 0 {
		fmt.Fprintf(&b, ", device busy %s", formatDuration(ev.DeviceBusy))
	}
	return b.String()
}

// niceStep returns a 1, 2 or 5 × 10^n step that cuts span into about n parts.
func niceStep(span time.Duration, n int) time.Duration {
	if span <= 0 {
		return time.Second
	}
	raw := float64(span) / float64(n)
	exp := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*exp >= raw {
			return max(time.Duration(m*exp), time.Microsecond)
		}
	}
	return time.Duration(10 * exp)
}

// formatSeconds prints an offset from the start as seconds.
func formatSeconds(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s == 0:
		return "0s"
	case math.Abs(s) < 10:
		return fmt.Sprintf("%.3gs", s)
	default:
		return fmt.Sprintf("%.1fs", s)
	}
}

// formatDuration prints a duration with three significant digits.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.3gs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

// sanitizeID keeps the characters an element id can safely hold.
func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// naturalLess orders names with numbers by value: dev2 before dev10.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := leadingDigits(a), leadingDigits(b)
		if da != "" && db != "" {
			if len(da) != len(db) {
				return len(da) < len(db)
			}
			if da != db {
				return da < db
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))
