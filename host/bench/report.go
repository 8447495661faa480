package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/zkhost/zkhost/host/api"
)

// Print writes r as two tables: the run's figures, then every phase's p50 and
// p99.
func Print(w io.Writer, r *Result) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetStyle(table.StyleLight)
	t.SetTitle(fmt.Sprintf("zkhost bench: %s, %d jobs × %d partitions, concurrency %d", r.Circuit, r.Jobs, r.Partitions, r.Concurrency))
	var devs []string
	for _, d := range r.Devices {
		devs = append(devs, fmt.Sprintf("%s: %s (%s, %s)", d.Name, d.Model, d.Kind, lastPath(d.Backend)))
	}
	t.AppendRow(table.Row{"devices", strings.Join(devs, "\n")})
	t.AppendRow(table.Row{"proofs (verified)", r.Proofs})
	if r.FailedJobs > 0 {
		t.AppendRow(table.Row{"failed jobs", r.FailedJobs})
	}
	t.AppendRow(table.Row{"wall time", r.Wall.Round(time.Millisecond)})
	t.AppendRow(table.Row{"proofs per minute", fmt.Sprintf("%.2f", r.ProofsPerMinute)})
	t.AppendRow(table.Row{"seconds per proof", fmt.Sprintf("%.3f", r.SecondsPerProof)})
	t.AppendRow(table.Row{"job latency p50 / p99", fmt.Sprintf("%s / %s", round(r.JobLatencyP50), round(r.JobLatencyP99))})
	if r.SubmitP50 > 0 {
		t.AppendRow(table.Row{"submit p50 / p99", fmt.Sprintf("%s / %s (a job's inputs: %s, %s at p50)", round(r.SubmitP50), round(r.SubmitP99),
			megabytes(r.JobBytes), megabytesPerSecond(r.JobBytes, r.SubmitP50))})
	}
	if r.DeviceBusyPercent >= 0 {
		var per []string
		names := make([]string, 0, len(r.DeviceBusy))
		for n := range r.DeviceBusy {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			per = append(per, fmt.Sprintf("%s %.1f%%", n, r.DeviceBusy[n]))
		}
		t.AppendRow(table.Row{"device busy (device-measured)", fmt.Sprintf("%.1f%% (%s)", r.DeviceBusyPercent, strings.Join(per, ", "))})
	} else {
		t.AppendRow(table.Row{"device busy (device-measured)", "n/a: no timeline (pass the daemon's [timeline] path with --timeline)"})
	}
	if len(r.Devices) > 1 || len(r.ProofsByDevice) > 1 {
		var per []string
		for _, d := range r.Devices {
			health := "healthy"
			if !d.Healthy {
				health = "down: " + d.Error
			}
			per = append(per, fmt.Sprintf("%s: %d proofs, %d restarts, %s", d.Name, r.ProofsByDevice[d.Name], d.Restarts, health))
		}
		t.AppendRow(table.Row{"devices (at the end)", strings.Join(per, "\n")})
	}
	if r.Analysis != nil && r.Analysis.HandoffBytes > 0 {
		t.AppendRow(table.Row{"partition handed off (mean file)", fmt.Sprintf("%d bytes", r.Analysis.HandoffBytes)})
	}
	if r.Analysis != nil {
		var gaps []string
		for _, d := range r.Analysis.Devices {
			if d.Idle > 0 {
				gaps = append(gaps, fmt.Sprintf("%s idle %s: %s", d.Name, round(d.Idle), d.IdleBreakdown()))
			}
		}
		if len(gaps) > 0 {
			t.AppendRow(table.Row{"device idle, by cause", strings.Join(gaps, "\n")})
		}
	}
	st := r.Steady
	if st.OK {
		t.AppendRow(table.Row{"steady state (window)", fmt.Sprintf("%s from each device's first proof to the last submission; %d warm-up proofs left out", round(st.Window), st.WarmupProofs)})
	} else {
		t.AppendRow(table.Row{"steady state (window)", st.Note})
	}
	t.AppendRow(table.Row{"steady proofs per minute", fmt.Sprintf("%.2f (%d proofs)", st.ProofsPerMinute, st.Proofs)})
	if st.Isolated > 0 {
		how := fmt.Sprintf("median of %d single proofs on the warm daemon; prove call %s", st.IsolatedProofs, round(st.IsolatedWall))
		if st.IsolatedProofs == 0 {
			how = "given"
		}
		t.AppendRow(table.Row{"isolated device time per proof", fmt.Sprintf("%s (%s)", round(st.Isolated), how)})
		t.AppendRow(table.Row{"ratio to the isolated rate", fmt.Sprintf("%.3f (%.2f of %.2f proofs/min the devices alone allow)", st.Ratio, st.ProofsPerMinute, st.IsolatedProofsPerMinute)})
	}
	if st.TimelineBusyPercent >= 0 {
		t.AppendRow(table.Row{"steady device busy (timeline)", fmt.Sprintf("%.1f%%%s", st.TimelineBusyPercent, perDevice(st, false))})
	}
	if st.UtilizationSource != "" {
		t.AppendRow(table.Row{"steady utilization (" + st.UtilizationSource + ")", fmt.Sprintf("%.1f%% over %d samples%s", st.UtilizationPercent, st.UtilizationSamples, perDevice(st, true))})
	} else if st.TimelineBusyPercent >= 0 {
		t.AppendRow(table.Row{"steady utilization (driver)", "n/a: the timeline has no utilization samples (the backend reports none; see zkhost status)"})
	}
	if m := r.Memory; m != nil {
		for _, row := range memoryRows(m) {
			t.AppendRow(row)
		}
	}
	if r.TimelinePath != "" {
		t.AppendRow(table.Row{"timeline", r.TimelinePath})
	} else {
		t.AppendRow(table.Row{"timeline", "none"})
	}
	t.SetColumnConfigs([]table.ColumnConfig{{Number: 2, WidthMax: 100, WidthMaxEnforcer: text.WrapSoft}})
	t.Render()

	p := table.NewWriter()
	p.SetOutputMirror(w)
	p.SetStyle(table.StyleLight)
	p.SetTitle("phases (from " + r.PhasesSource + ")")
	p.AppendHeader(table.Row{"phase", "where", "count", "p50", "p99", "max"})
	for _, ph := range r.Phases {
		where := "device"
		if ph.Host {
			where = "host"
		}
		p.AppendRow(table.Row{ph.Name, where, ph.Count, round(ph.P50), round(ph.P99), round(ph.Max)})
	}
	p.SetColumnConfigs([]table.ColumnConfig{{Number: 3, Align: text.AlignRight}, {Number: 4, Align: text.AlignRight}, {Number: 5, Align: text.AlignRight}, {Number: 6, Align: text.AlignRight}})
	p.Render()
	for _, e := range r.Errors {
		fmt.Fprintln(w, "error:", e)
	}
}

// perDevice lists each device's steady busy (or utilization) share, when
// there are several devices.
func perDevice(st Steady, util bool) string {
	if len(st.PerDevice) < 2 {
		return ""
	}
	names := make([]string, 0, len(st.PerDevice))
	for n := range st.PerDevice {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		v := st.PerDevice[n].BusyPercent
		if util {
			v = st.PerDevice[n].UtilizationPercent
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%%", n, v))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// round keeps three significant digits of a duration.
func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond / 10)
}

// megabytes writes n bytes in MB (10^6), one decimal.
func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// megabytesPerSecond is n bytes over d in MB/s (10^6), or "-" for no time.
func megabytesPerSecond(n int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MB/s", float64(n)/1e6/d.Seconds())
}

func lastPath(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// memoryRows are the memory sampler's peaks as table rows.
func memoryRows(m *MemoryPeaks) []table.Row {
	gb := api.FormatBytes
	proc := func(p ProcMemory) string {
		return fmt.Sprintf("%s (anonymous %s, file %s, shared %s)", gb(p.RSS), gb(p.Anon), gb(p.File), gb(p.Shmem))
	}
	rows := []table.Row{{"memory peaks", fmt.Sprintf("%d samples, every %s; each figure's own peak", m.Samples, m.Interval)}}
	if m.Note != "" {
		rows = append(rows, table.Row{"memory: processes", "n/a: " + m.Note})
	} else if m.Host.RSS > 0 {
		rows = append(rows,
			table.Row{"memory: this process (daemon)", proc(m.Host)},
			table.Row{"memory: its children (backends)", proc(m.Children)},
			table.Row{"memory: machine in use", fmt.Sprintf("%s (%s before the run)", gb(m.MachineUsed), gb(m.MachineUsedAtStart))})
	}
	rows = append(rows, table.Row{"memory: budget granted", fmt.Sprintf("%s; partitions at once: %d synthesizing, %d on devices", gb(m.BudgetUsed), m.Synthesizing, m.OnDevices)})
	return rows
}
