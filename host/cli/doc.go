// Package cli holds the zkhost subcommands that talk to a running daemon (submit, wait,
// status, jobs, job, cancel, preload, evict). Each is a function of the command's
// arguments and output streams, so cmd/zkhost only dispatches and tests run them against
// a fake daemon; Commands lists them for the dispatcher.
//
// Every command finds the daemon the same way: --api ADDR (a socket path, unix:///path,
// or host:port with --token-file and optionally --tls-ca), else the [api] socket of
// --config FILE, else the default socket ($XDG_STATE_HOME/zkhost/zkhost.sock).
// Results go to stdout (a job id, a table, JSON); progress and notices go to stderr.
package cli
