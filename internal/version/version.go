package version

import (
	"runtime/debug"
	"strings"
)

// version is set at link time by a release build (see the package comment); empty
// otherwise.
var version string

// String returns the build's version: the link-time version when set, else the
// module version go build stamped, else "devel" (a test binary, or a build
// without VCS information).
func String() string {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, bi)
}

// resolve is String for a given link-time value and build information.
func resolve(linked string, bi *debug.BuildInfo) string {
	if v := strings.TrimSpace(linked); v != "" {
		return v
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
