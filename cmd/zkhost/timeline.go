package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/zkhost/zkhost/host/cli"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/host/waterfall"
)

func init() {
	register("timeline", "render a timeline file as a waterfall page (zkhost timeline FILE -o waterfall.html)", cmdTimeline)
}

func cmdTimeline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("timeline", "timeline FILE [-o waterfall.html] [--title T] [--width PX] [--gaps N]", ""+
		"FILE is a timeline the daemon wrote ([timeline] path), or - for standard input. The page is one\n"+
		"self-contained HTML file: an SVG waterfall with one lane per synthesis worker and per device, each\n"+
		"device's utilization from the busy time its backend measured, and its largest idle gaps with what the\n"+
		"host was doing meanwhile.", stderr)
	out := fs.String("o", "waterfall.html", "the HTML page to write")
	title := fs.String("title", "", "page title (default: the timeline's file name)")
	width := fs.Int("width", 1200, "plot width in pixels")
	gaps := fs.Int("gaps", 10, "largest gaps listed per device")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return fmt.Errorf("%w: want one timeline file, got %d arguments", cli.ErrUsage, len(pos))
	}
	if *width < 200 || *width > 100000 {
		return fmt.Errorf("%w: --width %d is outside 200..100000", cli.ErrUsage, *width)
	}
	if *gaps < 1 {
		return fmt.Errorf("%w: --gaps must be at least 1", cli.ErrUsage)
	}
	src := pos[0]
	var r io.Reader
	if src == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	evs, err := timeline.Read(r)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
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

// printDevices prints each device's busy share and its largest gaps.
func printDevices(w io.Writer, a *waterfall.Analysis, gaps int) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	t.SetStyle(table.StyleLight)
	t.AppendHeader(table.Row{"device", "partitions", "busy %", "idle", "largest gaps (start +length: what the host was doing)"})
	for _, d := range a.Devices {
		var gs []string
		for i, g := range d.Gaps {
			if i == gaps {
				break
			}
			gs = append(gs, fmt.Sprintf("%.2fs +%s: %s", g.Start.Sub(a.Start).Seconds(), g.Duration().Round(1e5), g.Cause.Label()))
		}
		t.AppendRow(table.Row{d.Name, d.Partitions, fmt.Sprintf("%.1f", d.BusyPercent), d.Idle.Round(1e6), strings.Join(gs, "\n")})
	}
	t.Render()
}
