// Package synth runs one synthesizer plugin process for a circuit (the second
// plugin kind beside backends; see sdk.Synthesizer and docs/synthesizer.md).
//
// A Synth launches the binary through plugins.Launch with the backends' launch
// security (SHA-256 pinning, AutoMTLS over a unix socket, the parent-death
// watchdog, stderr into the host's log), checks its Describe and loads the
// circuit into it. Package supervise keeps it running, as it does a device's
// backend: it restarts it with backoff when it exits, and takes a synthesizer
// that crashes CrashLimit times within CrashWindow out of service until the
// window has passed. Calls in flight when the process exits fail with
// ErrCrashed, which the daemon retries. The daemon keeps the queue, the memory
// budget, the order and the verification; this package only runs the process.
package synth
