package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line progress bar of proofs done. On a terminal it
// redraws the line in place; elsewhere (a log, CI) it prints a line at most
// every 10 seconds and at the end.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	total   int
	start   time.Time
	tty     bool
	printed time.Time
	shown   int // proofs in the last line drawn
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now(), shown: -1}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// set shows n proofs done.
func (p *progress) set(n int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !p.tty && now.Sub(p.printed) < 10*time.Second && n != p.total {
		return
	}
	p.draw(n, now)
}

// done draws the final state and ends the line.
func (p *progress) done(n int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty || n != p.shown {
		p.draw(n, time.Now())
	}
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) draw(n int, now time.Time) {
	p.printed, p.shown = now, n
	fmt.Fprint(p.w, p.line(n, now.Sub(p.start)))
}

// line renders the bar: [#####-----] 12/40 proofs  6.3/min  elapsed 1m54s  ETA 4m27s
func (p *progress) line(n int, elapsed time.Duration) string {
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = min(width, n*width/p.total)
	}
	var b strings.Builder
	if p.tty {
		b.WriteString("\r\x1b[K")
	}
	fmt.Fprintf(&b, "[%s%s] %d/%d proofs", strings.Repeat("#", filled), strings.Repeat("-", width-filled), n, p.total)
	if n > 0 && elapsed > 0 {
		rate := float64(n) / elapsed.Minutes()
		fmt.Fprintf(&b, "  %.1f/min", rate)
		if left := p.total - n; left > 0 {
			eta := time.Duration(float64(left) / rate * float64(time.Minute))
			fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
		}
	}
	fmt.Fprintf(&b, "  elapsed %s", elapsed.Round(time.Second))
	if !p.tty {
		b.WriteString("\n")
	}
	return b.String()
}
