package sdktest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// MainWithFakeBackend is a TestMain body for tests that need a real plugin process
// they can stop or kill: it builds the SDK's fake backend (testdata/fakebackend)
// into a temporary folder, sets *path to the binary, runs the tests and removes the
// folder. TestMain passes its result to os.Exit.
func MainWithFakeBackend(m *testing.M, path *string) int {
	dir, err := os.MkdirTemp("", "fakebackend")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	*path = filepath.Join(dir, "fakebackend")
	build := exec.Command("go", "build", "-o", *path, "github.com/zkhost/zkhost/sdk/sdktest/testdata/fakebackend")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the fake backend:", err)
		return 1
	}
	return m.Run()
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers, such as a logger's
// goroutines, that a test reads when it fails.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
