// Package version is zkhost's one version string, shared by every binary the
// repository builds (zkhost, the backends, the daemon's Status), so that
// `zkhost version`, the status page and a backend's Describe never disagree.
//
// The string comes from the build: a release build sets it with
// `-ldflags "-X github.com/zkhost/zkhost/internal/version.version=v1.2.3"` (the
// Makefile passes `git describe`), and any other build falls back to the module
// version the Go toolchain stamps from the checkout (a pseudo-version such as
// v0.0.0-20261203101500-c5e830caa287, "+dirty" when the tree had changes).
package version
