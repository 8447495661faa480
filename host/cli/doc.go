// Package cli holds zkhost's command-line plumbing and the subcommands that talk to a
// running daemon (submit, wait, status, jobs, job, cancel, preload, evict, enable).
//
// A Command carries its name, its one-line summary and its usage with its Run; a
// Registry is the one table of a program's commands (cmd/zkhost builds it from these
// and its own), which the dispatcher searches and `zkhost help` lists. Each command
// is a function of an Invocation (its arguments and output streams), so tests run
// them against a fake daemon.
//
// Every command finds the daemon the same way: --api ADDR (a socket path, unix:///path,
// or host:port with --token-file and optionally --tls-ca), else the [api] socket of
// --config FILE, else the default socket ($XDG_STATE_HOME/zkhost/zkhost.sock).
// Results go to stdout (a job id, a table, JSON); progress and notices go to stderr.
package cli
