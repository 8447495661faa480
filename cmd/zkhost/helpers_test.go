package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildCPUBackend builds zkhost-backend-cpu into dir and returns its path, for the
// tests that run the CLI against a real backend process.
func buildCPUBackend(t *testing.T, dir string) string {
	t.Helper()
	backend := filepath.Join(dir, "zkhost-backend-cpu")
	if out, err := exec.Command("go", "build", "-o", backend, "github.com/zkhost/zkhost/cmd/zkhost-backend-cpu").CombinedOutput(); err != nil {
		t.Fatalf("building the backend: %v\n%s", err, out)
	}
	return backend
}

// zkhostRunner returns a function that runs the CLI with args as a user would and
// returns its stdout, failing t on a non-zero exit.
func zkhostRunner(t *testing.T) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("zkhost %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String()
	}
}
