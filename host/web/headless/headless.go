// Package headless drives a headless Chromium for the tests of zkhost's pages
// (the waterfall, the status page): it finds the browser, renders a page and
// returns the DOM after its scripts ran, or takes a screenshot.
//
// CI installs Debian's "chromium" package (/usr/bin/chromium). Tests take the
// browser from ForTest, which skips them, saying so, when none is installed.
package headless

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Package is the Debian package that provides the browser.
const Package = "chromium"

// ErrNotFound is returned by Find when no Chromium is installed.
var ErrNotFound = errors.New("no chromium found (install Debian's " + Package + " package: apt-get install -y " + Package + ")")

// candidates are the names Chromium goes by, in order of preference.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns the path of a Chromium executable: $ZKHOST_CHROMIUM when set,
// else the first of chromium, chromium-browser, google-chrome on $PATH.
func Find() (string, error) {
	if p := os.Getenv("ZKHOST_CHROMIUM"); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("$ZKHOST_CHROMIUM: %w; %w", err, ErrNotFound)
		}
		return path, nil
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", ErrNotFound
}

// RequireEnv names the environment variable that makes a missing browser a
// test failure rather than a skip: CI sets it (.ci/run installs Chromium), so
// the page tests there cannot pass by not running.
const RequireEnv = "ZKHOST_REQUIRE_BROWSER"

// ForTest returns the Chromium Find finds for test t. When none is installed
// it fails t if RequireEnv is set to 1, and otherwise skips t, saying why (a
// developer's machine need not have a browser).
func ForTest(t testing.TB) Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s=1 but no browser: %v", RequireEnv, err)
		}
		t.Skipf("skipping the browser test (set %s=1 to fail instead): %v", RequireEnv, err)
	}
	return Browser{Path: path}
}

// Browser is one Chromium executable.
type Browser struct {
	Path string
	// Timeout bounds one run; 0 means 60 seconds.
	Timeout time.Duration
	// Budget is the virtual time, in milliseconds, the page's scripts get
	// before the DOM is dumped or the screenshot taken (timers run that far);
	// 0 means 3000.
	Budget int
}

// flags are the flags every run passes: no sandbox (tests run as root in CI),
// no GPU, and none of the background traffic a closed network refuses.
var flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--no-first-run", "--disable-quic",
	"--hide-scrollbars", "--mute-audio",
}

func (b Browser) run(ctx context.Context, extra ...string) ([]byte, error) {
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	budget := b.Budget
	if budget <= 0 {
		budget = 3000
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	profile, err := os.MkdirTemp("", "zkhost-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	args := append(append([]string{}, flags...), "--user-data-dir="+profile, fmt.Sprintf("--virtual-time-budget=%d", budget))
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, b.Path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", b.Path, err, tail(stderr.Bytes(), 2000))
	}
	return stdout.Bytes(), nil
}

// DumpDOM loads url and returns the serialized DOM after the page's scripts ran.
func (b Browser) DumpDOM(ctx context.Context, url string) ([]byte, error) {
	out, err := b.run(ctx, "--dump-dom", url)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, fmt.Errorf("%s printed no DOM for %s", b.Path, url)
	}
	return out, nil
}

// Screenshot loads url in a width×height window and writes a PNG to path.
func (b Browser) Screenshot(ctx context.Context, url, path string, width, height int) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := b.run(ctx, "--screenshot="+abs, fmt.Sprintf("--window-size=%d,%d", width, height), url); err != nil {
		return err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("no screenshot written: %w", err)
	}
	if st.Size() == 0 {
		return fmt.Errorf("screenshot %s is empty", abs)
	}
	return nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
