// Package gentest checks that generated Go files are what their generator
// writes today: sdk's per-curve packages (solvebn254, devsetupbn254) are
// written by a gen.sh from their BLS12-381 source, and a test in the source
// package runs it into a temporary folder and compares.
package gentest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Check runs the generator script gen (a path relative to the test's folder)
// with OUT set to a temporary folder and gofmt on its PATH, and fails t for
// each file it writes that differs from its copy in the folder committed (or
// is missing there).
func Check(t *testing.T, gen, committed string) {
	t.Helper()
	gofmt := filepath.Join(runtime.GOROOT(), "bin", "gofmt")
	out := t.TempDir()
	cmd := exec.Command("sh", gen)
	cmd.Env = append(os.Environ(), "OUT="+out, "PATH="+filepath.Dir(gofmt)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", gen, err, b)
	}
	entries, err := os.ReadDir(out)
	if err != nil || len(entries) == 0 {
		t.Fatalf("%s wrote nothing into %s (%v)", gen, out, err)
	}
	for _, e := range entries {
		f := e.Name()
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(committed, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s's output: run go generate on this test's package", filepath.Join(committed, f), gen)
		}
	}
}
