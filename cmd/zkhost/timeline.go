package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/host/waterfall"
)

func cmdTimeline(ctx context.Context, inv cli.Invocation) error {
	args, stdout := inv.Args, inv.Stdout
	fs := inv.FlagSet("" +
		"FILE is a timeline the daemon wrote, or - for standard input. Without FILE it is the daemon's own: the\n" +
		"[timeline] path of --config (or $ZKHOST_CONFIG), else of the default config (timeline.jsonl in the state directory), with\n" +
		"the files rotation kept of it. The page is one self-contained HTML file: an SVG waterfall with one lane\n" +
		"per synthesis worker and per device, each device's busy share from the busy time its backend measured\n" +
		"and its utilization samples (NVML on a GPU), and its largest idle gaps with what the host was doing.")
	out := fs.String("o", "waterfall.html", "the HTML page to write")
	title := fs.String("title", "", "page title (default: the timeline's file name)")
	width := fs.Int("width", 1200, "plot width in pixels")
	gaps := fs.Int("gaps", 10, "largest gaps listed per device")
	last := fs.Duration("last", 0, "only the events of this long before the newest one (e.g. 10m; 0: all)")
	cfgPath := fs.String("config", "", "without FILE: the daemon config whose [timeline] path to read")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		fs.Usage()
		return fmt.Errorf("%w: want at most one timeline file, got %d arguments", cli.ErrUsage, len(pos))
	}
	if *width < 200 || *width > 100000 {
		return fmt.Errorf("%w: --width %d is outside 200..100000", cli.ErrUsage, *width)
	}
	if *gaps < 1 {
		return fmt.Errorf("%w: --gaps must be at least 1", cli.ErrUsage)
	}
	if *last < 0 {
		return fmt.Errorf("%w: --last may not be negative", cli.ErrUsage)
	}
	var files []string
	src := ""
	if len(pos) == 1 {
		if *cfgPath != "" {
			return fmt.Errorf("%w: --config is for reading the daemon's timeline, without FILE", cli.ErrUsage)
		}
		src, files = pos[0], []string{pos[0]}
	} else {
		cfg := config.Default()
		if path := cli.ConfigPath(*cfgPath); path != "" {
			if cfg, err = config.Load(path); err != nil {
				return err
			}
		}
		if cfg.Timeline.Path == "" {
			return fmt.Errorf("the daemon's config turns the timeline off ([timeline] enabled = false): name a FILE")
		}
		src = cfg.Timeline.Path
		if files = timeline.Files(src); len(files) == 0 {
			return fmt.Errorf("%s: no such file: the daemon has written no timeline there yet", src)
		}
	}
	var evs []timeline.Event
	for _, f := range files {
		part, err := readTimelineFile(f, inv.Stderr)
		if err != nil {
			return err
		}
		evs = append(evs, part...)
	}
	if *last > 0 {
		evs = lastEvents(evs, *last)
	}
	a, err := waterfall.Analyze(evs)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if *title == "" {
		*title = "zkhost waterfall: " + filepath.Base(src)
	}
	var page bytes.Buffer
	if err := waterfall.Write(&page, a, waterfall.Options{Title: *title, Source: src, Width: *width, MaxGaps: *gaps}); err != nil {
		return err
	}
	if err := os.WriteFile(*out, page.Bytes(), 0o644); err != nil {
		return err
	}
	printDevices(stdout, a, 3)
	fmt.Fprintf(stdout, "wrote %s (%d events, %s)\n", *out, len(evs), a.Span().Round(1e6))
	return nil
}

// readTimelineFile reads one timeline file, or standard input for "-". A
// torn last line (the daemon was writing it, or its disk filled) is skipped
// with a note on stderr: the events before it are good.
func readTimelineFile(src string, stderr io.Writer) ([]timeline.Event, error) {
	var r io.Reader = os.Stdin
	if src != "-" {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	c, err := timeline.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	if c.TornLine > 0 {
		fmt.Fprintf(stderr, "%s: line %d is cut off (written when the daemon stopped or its disk filled); skipped\n", src, c.TornLine)
	}
	return c.Events, nil
}

// lastEvents keeps the events that end within d before the newest end.
func lastEvents(evs []timeline.Event, d time.Duration) []timeline.Event {
	var newest time.Time
	for _, e := range evs {
		if e.End.After(newest) {
			newest = e.End
		}
	}
	from := newest.Add(-d)
	out := evs[:0]
	for _, e := range evs {
		if e.End.After(from) {
			out = append(out, e)
		}
	}
	return out
}

// printDevices prints each device's busy share and its largest gaps.
func printDevices(w io.Writer, a *waterfall.Analysis, gaps int) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetStyle(table.StyleLight)
	t.AppendHeader(table.Row{"device", "partitions", "busy %", "utilization %", "idle", "largest gaps (start +length: what the host was doing)"})
	for _, d := range a.Devices {
		var gs []string
		for i, g := range d.Gaps {
			if i == gaps {
				break
			}
			gs = append(gs, fmt.Sprintf("%.2fs +%s: %s", g.Start.Sub(a.Start).Seconds(), g.Duration().Round(1e5), g.Cause.Label()))
		}
		util := "-"
		if d.UtilizationCount > 0 {
			util = fmt.Sprintf("%.1f (%s)", d.Utilization, d.UtilizationSource)
		}
		t.AppendRow(table.Row{d.Name, d.Partitions, fmt.Sprintf("%.1f", d.BusyPercent), util, d.Idle.Round(1e6), strings.Join(gs, "\n")})
	}
	t.Render()
}
