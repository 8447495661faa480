// Package linetail keeps the last lines a child process wrote to its standard
// error, so that an error about the process can quote its own words (a missing
// library, a bad flag, a panic) instead of only what the parent saw. The plugin
// launcher and refprover's prove workers use it.
package linetail

import (
	"strings"
	"sync"
)

// maxLine bounds one kept line, in bytes.
const maxLine = 1024

// Tail is an io.Writer that keeps the last Keep non-blank lines written to it
// and passes each finished line to OnLine when set. It is safe for concurrent use.
type Tail struct {
	Keep   int
	OnLine func(line string)

	mu      sync.Mutex
	partial strings.Builder
	lines   []string
}

// Write takes bytes as the process wrote them (whole lines, or a long line in
// pieces).
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range string(p) {
		if c != '\n' {
			if t.partial.Len() < maxLine {
				t.partial.WriteRune(c)
			}
			continue
		}
		t.endLine()
	}
	return len(p), nil
}

// Flush ends an unfinished last line, once the process has exited.
func (t *Tail) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLine()
}

func (t *Tail) endLine() {
	line := strings.TrimSpace(t.partial.String())
	t.partial.Reset()
	if line == "" {
		return
	}
	if t.OnLine != nil {
		t.OnLine(line)
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.Keep {
		t.lines = t.lines[1:]
	}
}

// String returns the kept lines joined by " | ", with an unfinished last line.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if s := strings.TrimSpace(t.partial.String()); s != "" {
		lines = append(append([]string(nil), lines...), s)
	}
	return strings.Join(lines, " | ")
}
