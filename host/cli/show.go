package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/zkhost/zkhost/host/api"
)

// Status runs `zkhost status`: tables of the queues by class, the devices and the
// memory budget (or the report as JSON).
var Status = Command{Name: "status", Summary: "show queues, devices and the memory budget", Usage: "status [flags]", Run: statusCmd}

func statusCmd(ctx context.Context, inv Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`
Show the daemon: waiting work per priority class, synthesis threads, each device
(backend, model, partitions in flight, how busy it was over the last minute, proving
keys resident, restarts, health) and the host memory budget.`)
	var d daemonFlags
	asJSON := fs.Bool("json", false, "print the report as JSON")
	d.register(fs)
	if ok, err := parseNone(fs, args); !ok {
		return err // nil after --help
	}
	c, err := d.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Status(ctx)
	if err != nil {
		return err // main says "zkhost status:" already
	}
	if *asJSON {
		return writeJSON(stdout, s)
	}
	version := s.Version
	if version == "" {
		version = "(unknown version)"
	}
	fmt.Fprintf(stdout, "zkhost %s at %s, up %s; synthesis %d/%d running\n\n",
		version, c.Target(), fmtDuration(s.Uptime), s.SynthesisRunning, s.SynthesisCapacity)

	q := newTable("Queued work")
	q.AppendHeader(table.Row{"CLASS", "JOBS", "PARTITIONS"})
	for _, row := range s.Queues {
		q.AppendRow(table.Row{row.Class.String(), row.Jobs, row.Partitions})
	}
	alignRight(q, 2, 3)
	fmt.Fprintln(stdout, q.Render())
	fmt.Fprintln(stdout)

	dev := newTable("Devices")
	dev.AppendHeader(table.Row{"DEVICE", "BACKEND", "MODEL", "KIND", "IN FLIGHT", "BUSY (1 MIN)", "UTILIZATION (1 MIN)", "KEYS", "RESTARTS", "HEALTH"})
	for _, x := range s.Devices {
		health := "ok"
		if !x.Healthy {
			health = "DOWN"
			if x.Error != "" {
				health += ": " + x.Error
			}
		}
		keys := strings.Join(x.KeysResident, ", ")
		if keys == "" {
			keys = "-"
		}
		util := "-"
		if x.UtilizationSource != "" {
			util = fmt.Sprintf("%.0f%% %s", x.UtilizationPercent, x.UtilizationSource)
		}
		dev.AppendRow(table.Row{x.Name, x.Backend, orDash(x.Model), x.Kind,
			fmt.Sprintf("%d/%d", x.InFlight, x.MaxInFlight), fmt.Sprintf("%.0f%%", x.BusyPercent), util,
			keys, x.Restarts, health})
	}
	if len(s.Devices) == 0 {
		dev.AppendRow(table.Row{"(none)"})
	}
	alignRight(dev, 5, 6, 7, 9)
	fmt.Fprintln(stdout, dev.Render())
	fmt.Fprintln(stdout)

	b := newTable("Memory budget")
	b.AppendHeader(table.Row{"USED", "TOTAL", "USED %", "CRITICAL RESERVE"})
	pct := "-"
	if s.Budget.TotalBytes > 0 {
		pct = fmt.Sprintf("%.0f%%", 100*float64(s.Budget.UsedBytes)/float64(s.Budget.TotalBytes))
	}
	b.AppendRow(table.Row{api.FormatBytes(s.Budget.UsedBytes), api.FormatBytes(s.Budget.TotalBytes), pct,
		api.FormatBytes(s.Budget.CriticalReserveBytes)})
	alignRight(b, 1, 2, 3, 4)
	fmt.Fprintln(stdout, b.Render())
	fmt.Fprintln(stdout)

	jt := newTable("Journal")
	jt.AppendHeader(table.Row{"DIRECTORY", "FREE", "RESERVE", "WRITES RETRIED", "STATE"})
	state := "ok"
	if !s.Journal.Writable {
		state = fmt.Sprintf("SHORT OF SPACE since %s: new jobs refused, accepted jobs wait (%s)",
			s.Journal.ShortSince.Format(time.RFC3339), s.Journal.LastError)
	}
	reserve := api.FormatBytes(s.Journal.ReserveBytes)
	if s.Journal.ReserveBytes > 0 && !s.Journal.ReserveHeld {
		reserve += " (released)"
	}
	jt.AppendRow(table.Row{orDash(s.Journal.Dir), api.FormatBytes(s.Journal.FreeBytes), reserve, s.Journal.WriteRetries, state})
	alignRight(jt, 2, 3, 4)
	fmt.Fprintln(stdout, jt.Render())
	if s.Cluster != nil {
		fmt.Fprintln(stdout)
		showCluster(stdout, s.Cluster)
	}
	return nil
}

// showCluster prints the cluster as the host sees it: its NATS connection,
// every host heard, and the cluster's queue.
func showCluster(stdout io.Writer, c *api.ClusterStatus) {
	conn := fmt.Sprintf("NATS %s since %s", c.Connection.State, c.Connection.Since.Format(time.RFC3339))
	if c.Connection.Server != "" {
		conn += " to " + c.Connection.Server
	}
	conn += fmt.Sprintf(", %d reconnections", c.Connection.Reconnects)
	if c.Connection.LastError != "" {
		conn += fmt.Sprintf("; last error at %s: %s", c.Connection.LastErrorAt.Format(time.RFC3339), c.Connection.LastError)
	}
	fmt.Fprintf(stdout, "Cluster (host %s, prefix %s): %s\n", c.Host, c.Prefix, conn)
	h := newTable("Cluster hosts")
	h.AppendHeader(table.Row{"HOST", "STATE", "FREE", "DEVICES", "KEYS"})
	for _, x := range c.Hosts {
		state := "alive"
		if !x.Alive {
			state = "SILENT since " + x.LastSeen.Format(time.RFC3339)
		}
		h.AppendRow(table.Row{x.Name, state, x.Free, orDash(strings.Join(x.Devices, ", ")), orDash(strings.Join(x.Keys, ", "))})
	}
	alignRight(h, 3)
	fmt.Fprintln(stdout, h.Render())
	fmt.Fprintln(stdout)
	if c.QueueError != "" {
		fmt.Fprintf(stdout, "Cluster queue: unreadable now: %s\n", c.QueueError)
		return
	}
	q := newTable("Cluster queue")
	q.AppendHeader(table.Row{"CLASS", "WAITING", "SYNTHESIZED", "HELD", "REDELIVERED"})
	for _, x := range c.Queues {
		q.AppendRow(table.Row{x.Class.String(), x.Waiting, x.Synthesized, x.Held, x.Redelivered})
	}
	alignRight(q, 2, 3, 4, 5)
	fmt.Fprintln(stdout, q.Render())
	oldest := "none"
	if !c.Oldest.IsZero() {
		oldest = time.Since(c.Oldest).Round(time.Second).String()
	}
	fmt.Fprintf(stdout, "Oldest partition not yet done: %s\n", oldest)
}

// Jobs runs `zkhost jobs`: a table of recent jobs, newest first.
var Jobs = Command{Name: "jobs", Summary: "list recent jobs", Usage: "jobs [flags]", Run: jobsCmd}

func jobsCmd(ctx context.Context, inv Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`
List recent jobs, newest first: id, class, circuit, state, partitions verified,
age and how long it ran, and why it failed.`)
	var d daemonFlags
	state := fs.String("state", "", "only jobs in this state: queued, running, done, failed or cancelled")
	limit := fs.Int("limit", 20, "at most this many jobs")
	asJSON := fs.Bool("json", false, "print the jobs as JSON")
	d.register(fs)
	if ok, err := parseNone(fs, args); !ok {
		return err // nil after --help
	}
	filter := api.ListFilter{Limit: *limit}
	if *limit < 1 || *limit > api.MaxListLimit {
		return usageErr(fs, "--limit %d: want 1..%d", *limit, api.MaxListLimit)
	}
	if *state != "" {
		st, err := api.ParseJobState(*state)
		if err != nil {
			return usageErr(fs, "--state: %v", err)
		}
		filter.State = st
	}
	c, err := d.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	jobs, err := c.List(ctx, filter)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, jobs)
	}
	if len(jobs) == 0 {
		fmt.Fprintln(stdout, "no jobs")
		return nil
	}
	now := time.Now()
	t := newTable("")
	t.AppendHeader(table.Row{"JOB", "CLASS", "CIRCUIT", "STATE", "VERIFIED", "AGE", "RAN", "ERROR"})
	for _, j := range jobs {
		ran := "-"
		if !j.StartedAt.IsZero() {
			end := j.FinishedAt
			if end.IsZero() {
				end = now
			}
			ran = fmtDuration(end.Sub(j.StartedAt))
		}
		t.AppendRow(table.Row{j.ID, j.Class.String(), j.Circuit, j.State.String(),
			fmt.Sprintf("%d/%d", j.Count(api.PartitionVerified), len(j.Partitions)),
			fmtDuration(span(j.CreatedAt, now)), ran, truncate(j.Error, 60)})
	}
	alignRight(t, 5, 6, 7)
	fmt.Fprintln(stdout, t.Render())
	return nil
}

// Job runs `zkhost job`: one job with a row per partition.
var Job = Command{Name: "job", Summary: "show one job and its partitions", Usage: "job [flags] JOB", Run: jobCmd}

func jobCmd(ctx context.Context, inv Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`
Show one job: its state and a row per partition (state, attempts, device, time
queued, synthesizing and proving, last error).`)
	var d daemonFlags
	asJSON := fs.Bool("json", false, "print the job as JSON (with proof bytes, base64, when done)")
	d.register(fs)
	arg, c, err := d.parseOneAndDial(fs, args, "JOB")
	if c == nil {
		return err // nil after --help
	}
	defer c.Close()
	j, err := c.Get(ctx, arg)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, j)
	}
	fmt.Fprintf(stdout, "job %s: %s, circuit %s, class %s, %d/%s verified\n",
		j.ID, j.State, j.Circuit, j.Class, j.Count(api.PartitionVerified), plural(len(j.Partitions), "partition"))
	if j.RequestID != "" {
		fmt.Fprintf(stdout, "request id %s\n", j.RequestID)
	}
	if j.Error != "" {
		fmt.Fprintf(stdout, "error: %s\n", j.Error)
	}
	t := newTable("")
	t.AppendHeader(table.Row{"PART", "STATE", "ATTEMPTS", "DEVICE", "WAITED", "SYNTH", "PROVE", "ERROR"})
	for _, p := range j.Partitions {
		t.AppendRow(table.Row{p.Index, p.State.String(), p.Attempts, orDash(p.Device),
			fmtDuration(span(p.QueuedAt, p.SynthStart)), fmtDuration(span(p.SynthStart, p.SynthEnd)),
			fmtDuration(span(p.ProveStart, p.ProveEnd)), truncate(p.Error, 60)})
	}
	alignRight(t, 1, 3, 5, 6, 7)
	fmt.Fprintln(stdout, t.Render())
	return nil
}

// Cancel runs `zkhost cancel`: it cancels each job named and prints its state.
var Cancel = Command{Name: "cancel", Summary: "cancel jobs", Usage: "cancel [flags] JOB...", Run: cancelCmd}

func cancelCmd(ctx context.Context, inv Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet(`
Cancel jobs. Partitions in progress are abandoned and proofs already made are
dropped. A job that has already ended is left as it is.`)
	var d daemonFlags
	d.register(fs)
	pos, c, err := d.parseSomeAndDial(fs, args, "JOB")
	if c == nil {
		return err // nil after --help
	}
	defer c.Close()
	var failed []error
	for _, id := range pos {
		// Cancel answers for a job cancelled earlier as for one it cancels now: look
		// first, to say that such a job had already ended.
		j, err := c.Get(ctx, id)
		ended := err == nil && j.State.Terminal()
		if err == nil && !ended {
			j, err = c.Cancel(ctx, id)
		}
		switch {
		case err != nil:
			failed = append(failed, fmt.Errorf("%s: %w", id, err))
		case !ended && j.State == api.JobCancelled:
			fmt.Fprintf(stdout, "job %s cancelled\n", j.ID)
		default:
			fmt.Fprintf(stdout, "job %s had already ended: %s\n", j.ID, j.State)
		}
	}
	return errors.Join(failed...)
}

// plural returns "1 partition", "2 partitions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func newTable(title string) table.Writer {
	t := table.NewWriter()
	t.SetStyle(table.StyleLight)
	if title != "" {
		t.SetTitle(title)
	}
	return t
}

// alignRight right-aligns the numeric columns (1-based) of t.
func alignRight(t table.Writer, cols ...int) {
	var cfg []table.ColumnConfig
	for _, c := range cols {
		cfg = append(cfg, table.ColumnConfig{Number: c, Align: text.AlignRight})
	}
	t.SetColumnConfigs(cfg)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
