package sdktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkhost/zkhost/sdk/internal/logbuf"
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
// goroutines, that a test reads when it fails: the one the suite itself
// collects a backend's logs in (Write, String).
type SyncBuffer = logbuf.Buffer
