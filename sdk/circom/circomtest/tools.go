package circomtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk/curve"
)

// The versions of the circom tools the tests run, as .ci/run, docs/circom.md and
// testdata/make.sh install them.
const (
	SnarkjsVersion   = "0.7.6"
	Circom2Version   = "0.2.23" // the circom 2 compiler as WebAssembly
	CircomlibVersion = "2.0.5"
)

// Snarkjs returns the command that runs snarkjs: $ZKHOST_SNARKJS, else snarkjs on
// PATH, else snarkjs installed by npm into the user's cache (once; later runs reuse
// it). snarkjs is the check of the tests that call it, so a machine without it gets
// it rather than a skipped check: with neither snarkjs nor npm, or when the install
// fails, the test fails saying so.
func Snarkjs(t testing.TB) string {
	t.Helper()
	return npmCommand(t, "ZKHOST_SNARKJS", "snarkjs", "snarkjs", SnarkjsVersion)
}

// Circom2 returns the command that runs the circom compiler, as Snarkjs does for
// snarkjs: $ZKHOST_CIRCOM2, else circom2 on PATH, else circom2 from npm.
func Circom2(t testing.TB) string {
	t.Helper()
	return npmCommand(t, "ZKHOST_CIRCOM2", "circom2", "circom2", Circom2Version)
}

// Circomlib returns the folder of circomlib's package (circuits/ holds its
// templates), installed by npm into the user's cache as Snarkjs installs snarkjs. It
// is always that install: circomlib has no command to look for on PATH.
func Circomlib(t testing.TB) string {
	t.Helper()
	return filepath.Join(npmInstall(t, "circomlib", CircomlibVersion), "node_modules", "circomlib")
}

// PrimeName is circom's and snarkjs's name for curve's scalar field: what circom's
// --prime takes, and what the testdata's file names end with.
func PrimeName(id ecc.ID) (string, error) {
	if name := curve.SnarkjsName(id); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("circomtest: curve %s: circom and snarkjs know bn128 (BN254) and bls12381 (BLS12-381)", id)
}

// npmCommand returns the command bin: the one $env names, else bin on PATH, else
// the one package pkg@version installs with npm into the user's cache.
func npmCommand(t testing.TB, env, bin, pkg, version string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		found, err := exec.LookPath(p)
		if err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return found
	}
	if found, err := exec.LookPath(bin); err == nil {
		return found
	}
	return filepath.Join(npmInstall(t, pkg, version), "node_modules", ".bin", bin)
}

// npmInstall returns the folder that npm installed pkg@version into, under the
// user's cache (zkhost-test/PKG-VERSION), installing it the first time. Without npm,
// or when the install fails, t fails saying so.
func npmInstall(t testing.TB, pkg, version string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache directory to install %s@%s into: %v", pkg, version, err)
	}
	dir := filepath.Join(cache, "zkhost-test", pkg+"-"+version)
	installed := filepath.Join(dir, "node_modules", pkg, "package.json")
	if _, err := os.Stat(installed); err == nil {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("%s@%s is not installed and there is no npm to install it (install node and npm): %v", pkg, version, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed beside, then renamed into place: a run stopped midway, or another
	// installing at once, leaves no half-installed package at dir.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Logf("installing %s@%s into %s", pkg, version, dir)
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", tmp, pkg+"@"+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("installing %s@%s with npm: %v\n%s", pkg, version, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(installed); serr != nil {
			t.Fatalf("installing %s@%s into %s: %v", pkg, version, dir, err)
		}
	}
	return dir
}
