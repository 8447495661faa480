// Package e2e holds zkhost's end-to-end tests: they build the real binaries
// (zkhost, zkhost-backend-cpu and examples/faultbackend), start `zkhost serve`
// as a process with backends as processes, and check what a user would see
// through the client API: that backends which crash, hang or lie cost time but
// never a job and never a wrong proof, that nothing is left behind when the host
// dies, and that bad input of every kind is refused with a clear error while
// other jobs go on.
//
// The package has tests only. `go test ./e2e/` runs them in a few minutes on two
// cores; TestSoakShort (about 100 partitions with random kill -9 of backends and
// a host crash) is skipped with -short, and the long soak runs with
// `make soak` (scripts/soak.sh), which sets -soak.
package e2e
