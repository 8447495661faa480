// Package supervise runs one plugin process, a backend or a synthesizer, and
// keeps it running: the one supervisor both host/device and host/synth use.
//
// A Supervisor starts the process through its caller's Start function (which
// launches it with package plugins and readies it: Describe, checks, loading
// what it needs), records it in a pid file (ReapStale), and polls it. A process
// that exits (crash, kill -9, CUDA abort) ends its leases at once, so calls
// in flight fail with ErrCrashed, which is retryable, and is started again with
// capped exponential backoff. Exits are counted over a crash window: a plugin
// that exits CrashLimit times within it is out of service (ErrUnhealthy) until
// the window has passed or it is enabled again.
//
// The package knows nothing of what a plugin serves; its callers keep that
// (a device's resident keys, a synthesizer's turns) and wrap its errors with
// their names.
package supervise
