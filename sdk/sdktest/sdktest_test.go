package sdktest_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zkhost/zkhost/sdk/sdktest"
)

// keyDir is where this test keeps the example circuits' keys between runs, so the
// larger key is generated once: $ZKHOST_SDKTEST_KEYDIR, or a per-user folder in
// the temporary directory.
func keyDir() string {
	if d := os.Getenv("ZKHOST_SDKTEST_KEYDIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "zkhost-sdktest-keys-"+strconv.Itoa(os.Getuid()))
}

// TestExternalBackendConforms runs the suite against the backend binary named by
// $ZKHOST_SDKTEST_BACKEND (for example zkhost-backend-cuda on a GPU machine, where
// scripts/gpu-run.sh runs this test binary); skipped when unset.
func TestExternalBackendConforms(t *testing.T) {
	bin := os.Getenv("ZKHOST_SDKTEST_BACKEND")
	if bin == "" {
		t.Skip("set ZKHOST_SDKTEST_BACKEND to a backend binary")
	}
	cfg := sdktest.Config{BackendPath: bin, KeyDir: keyDir()}
	if k, err := strconv.Atoi(os.Getenv("ZKHOST_SDKTEST_CANCEL_K")); err == nil {
		cfg.CancelChainK = k
	}
	sdktest.Run(t, cfg)
}

// TestSuiteFailsAFakeBackend checks that the suite can fail: the fake
// backend answers every Prove with a hash instead of a proof, and the suite, run
// in a child test process, must reject it.
func TestSuiteFailsAFakeBackend(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fakebackend")
	build := exec.Command("go", "build", "-o", bin, "./testdata/fakebackend")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the fake backend: %v\n%s", err, out)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestHelperSuite$", "-test.short", "-test.v")
	child.Env = append(os.Environ(), helperEnv+"="+bin)
	out, err := child.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the suite passed a fake backend (%v):\n%s", err, out)
	}
	for _, want := range []string{"--- FAIL: TestHelperSuite/Prove", "does not decode as a gnark BLS12-381 proof", "--- PASS: TestHelperSuite/Describe"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
}

const helperEnv = "SDKTEST_HELPER_BACKEND"

// TestHelperSuite runs the suite against the backend named by helperEnv; it only
// runs as TestSuiteFailsAFakeBackend's child.
func TestHelperSuite(t *testing.T) {
	bin := os.Getenv(helperEnv)
	if bin == "" {
		t.Skip("runs only as a child of TestSuiteFailsAFakeBackend")
	}
	sdktest.Run(t, sdktest.Config{BackendPath: bin, KeyDir: keyDir()})
}
