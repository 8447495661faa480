package plugins

import (
	"strings"
	"sync"
)

// stderrTailLines is how many of a plugin's last stderr lines a failed start
// quotes.
const stderrTailLines = 8

// stderrTail keeps the last lines a plugin wrote to its standard error, so that a
// plugin that fails to start is reported with its own words (a missing library,
// a bad flag, a panic) rather than only go-plugin's handshake error, which the
// operator would otherwise find only in a debug-level log.
type stderrTail struct {
	mu      sync.Mutex
	partial strings.Builder
	lines   []string
}

// Write takes what go-plugin copies of the plugin's stderr (whole lines, or a
// long line in pieces).
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range string(p) {
		if c != '\n' {
			if t.partial.Len() < 1024 {
				t.partial.WriteRune(c)
			}
			continue
		}
		if line := strings.TrimSpace(t.partial.String()); line != "" {
			t.lines = append(t.lines, line)
			if len(t.lines) > stderrTailLines {
				t.lines = t.lines[1:]
			}
		}
		t.partial.Reset()
	}
	return len(p), nil
}

// String returns the kept lines joined by " | ", with an unfinished last line.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if s := strings.TrimSpace(t.partial.String()); s != "" {
		lines = append(append([]string(nil), lines...), s)
	}
	return strings.Join(lines, " | ")
}
