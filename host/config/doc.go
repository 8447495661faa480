// Package config reads the zkhost daemon's TOML configuration.
//
// Every option has a default, so an empty file (or no file: see LoadDefault and
// the embedded default.toml) gives a runnable daemon with one CPU backend.
// Load and Parse check the whole file before they answer and report every
// problem they find at once, each naming the key (as "device[1].sha256") and
// the line it is on: an operator should fix a config in one round, not one
// error per restart.
//
// The package checks form, not the machine: it resolves sizes against RAM and
// thread counts against cores, resolves relative paths against the config
// file's directory, and validates values (durations, sizes, digests, classes,
// addresses), but it does not open key directories, backends or TLS files. The
// daemon does that when it starts the component that needs them, so a config
// can be checked on another machine.
package config
