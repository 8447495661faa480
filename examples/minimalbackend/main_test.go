package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zkhost/zkhost/sdk/sdktest"
)

// TestConforms builds this example and runs the SDK's conformance suite against
// it, as a third-party author would.
func TestConforms(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "minimalbackend")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sdktest.Run(t, sdktest.Config{BackendPath: bin})
}
