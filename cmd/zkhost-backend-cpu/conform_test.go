package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkhost/zkhost/sdk/sdktest"
)

// TestConforms builds this command and runs the SDK's conformance suite against
// it (it was sdktest's own test before the SDK became a module of its own). The
// example circuits' keys are kept between runs in $ZKHOST_SDKTEST_KEYDIR, or in the
// per-user folder the suite shares with the SDK's own tests.
func TestConforms(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "zkhost-backend-cpu")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building zkhost-backend-cpu: %v\n%s", err, out)
	}
	// An empty KeyDir is the suite's per-user default.
	sdktest.Run(t, sdktest.Config{BackendPath: bin, KeyDir: os.Getenv("ZKHOST_SDKTEST_KEYDIR")})
}

// TestConformsCompact runs the suite against the backend taking compact
// partitions (-compact-w): its Compact check then proves compact partitions
// and refuses broken ones, where TestConforms checks they are refused.
func TestConformsCompact(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "zkhost-backend-cpu")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building zkhost-backend-cpu: %v\n%s", err, out)
	}
	sdktest.Run(t, sdktest.Config{BackendPath: bin, Args: []string{"-compact-w"}, KeyDir: os.Getenv("ZKHOST_SDKTEST_KEYDIR")})
}
