// Package inprocess runs a zkhost daemon inside the calling process, with a
// temporary state directory, for the commands that prove without a running
// daemon: `zkhost prove` (host/oneshot) and `zkhost bench` without --api
// (host/bench). They submit to it through its api.Service methods, so every
// proof they make goes through the daemon's one pipeline (queue, budget,
// synthesis, shared memory, device slots, verification) and nothing repeats it.
package inprocess
