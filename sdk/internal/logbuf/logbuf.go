// Package logbuf is a buffer a logger writes a plugin's log into from several
// goroutines, for the conformance suites to print when a check fails.
package logbuf

import (
	"bytes"
	"sync"
	"testing"

	hclog "github.com/hashicorp/go-hclog"
)

// Buffer is a bytes.Buffer safe for concurrent writers. Deliberately parallel
// to host/cluster's test syncWriter: see why there.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// LoggerForTest returns a debug-level logger named name (a plugin kind:
// "backend", "synthesizer") that writes into a Buffer, and has t print what it
// wrote when t fails, so a passing test stays quiet and a failing one shows
// the plugin's side.
func LoggerForTest(t testing.TB, name string) hclog.Logger {
	logs := &Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the %s's log:\n%s", name, logs.String())
		}
	})
	return hclog.New(&hclog.LoggerOptions{Name: name, Output: logs, Level: hclog.Debug})
}
