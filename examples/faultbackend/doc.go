// Command faultbackend is a zkhost backend that misbehaves on purpose, for testing
// how the host survives devices that crash, hang or lie. It wraps the CPU backend
// (package cpubackend), so when no fault fires it proves correctly, and it injects
// the faults its options ask for.
//
// The host passes a [[device]]'s options as -key=value arguments, so a config
// selects faults like this:
//
//	[[device]]
//	backend = "/path/to/faultbackend"
//	[device.options]
//	crash = "prove-mid"   # crash while proving ...
//	crash-p = "0.3"       # ... in 30% of the calls
//	seed = "7"
//
// Options (each may also come from the environment variable in brackets):
//
//	-crash PHASE        crash in PHASE [ZKHOST_FAULT_CRASH]
//	-crash-p P          probability of the crash, 0..1 (default 1) [ZKHOST_FAULT_CRASH_P]
//	-crash-how HOW      kill (SIGKILL itself, as the OOM killer would), exit (status 70)
//	                    or panic (a Go panic with its stack on stderr) (default kill)
//	-hang PHASE         never answer in PHASE, ignoring cancellation [ZKHOST_FAULT_HANG]
//	-hang-p P           probability of the hang (default 1) [ZKHOST_FAULT_HANG_P]
//	-invalid-p P        probability that a proof comes back invalid [ZKHOST_FAULT_INVALID_P]
//	-invalid-how HOW    negate (negate the proof's A point: well formed, does not
//	                    verify) or garbage (random bytes) (default negate)
//	-slow D             sleep D before each proof (a Go duration) [ZKHOST_FAULT_SLOW]
//	-mid-delay D        how long a prove-mid crash lets the proof run (default 20ms)
//	-exit-before-handshake  exit with status 3 before serving (a backend that
//	                    cannot start) [ZKHOST_FAULT_EXIT_BEFORE_HANDSHAKE]
//	-stdout-noise TEXT  print TEXT on standard output before serving, which breaks
//	                    go-plugin's handshake [ZKHOST_FAULT_STDOUT_NOISE]
//	-api-version N      claim backend API version N in Describe (e.g. 99)
//	-kind KIND          claim device kind KIND in Describe (e.g. "cuda", to stand in
//	                    for a GPU) (default "cpu")
//	-max-in-flight-claim N  claim MaxInFlight N in Describe (0 or less is refused
//	                    by the host); by default the CPU backend's own answer
//	-curves LIST        claim the curves in LIST (comma-separated, e.g. "bn254";
//	                    "none" claims none) in Describe; by default the CPU
//	                    backend's own
//	-seed N             seed of the random choices (default 1) [ZKHOST_FAULT_SEED]
//	-run-file PATH      a counter file: each start increments it and mixes it into
//	                    the seed, so a restarted backend does not replay the same
//	                    choices while a whole test run stays reproducible
//	-threads N, -max-in-flight N   passed to the CPU backend
//
// Phases: describe, loadkey, prove-start (on receiving a Prove, before touching
// the partition), prove-mid (while the proof computes), after-proof (the proof is
// done but never sent).
//
// Every fault that fires is logged at warn level on standard error (which the
// host forwards to its log) before it takes effect.
package main
