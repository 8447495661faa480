package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkhost/zkhost/sdk"
)

// Phases in which a crash or a hang can be injected.
const (
	phaseDescribe   = "describe"
	phaseLoadKey    = "loadkey"
	phaseProveStart = "prove-start"
	phaseProveMid   = "prove-mid"
	phaseAfterProof = "after-proof"
)

var phases = []string{phaseDescribe, phaseLoadKey, phaseProveStart, phaseProveMid, phaseAfterProof}

// options is the parsed command line.
type options struct {
	crashPhase string
	crashP     float64
	crashHow   string
	hangPhase  string
	hangP      float64
	invalidP   float64
	invalidHow string
	slow       time.Duration
	midDelay   time.Duration

	exitBeforeHandshake bool
	stdoutNoise         string
	apiVersion          int
	kind                string
	maxInFlightClaim    int
	// claimCurves makes Describe claim curves instead of the CPU backend's.
	claimCurves bool
	curves      []sdk.Curve

	seed    uint64
	runFile string

	threads     int
	maxInFlight int
}

// String lists the faults that are switched on, for the start-up log line.
func (o options) String() string {
	var parts []string
	if o.crashPhase != "" {
		parts = append(parts, fmt.Sprintf("crash=%s p=%g how=%s", o.crashPhase, o.crashP, o.crashHow))
	}
	if o.hangPhase != "" {
		parts = append(parts, fmt.Sprintf("hang=%s p=%g", o.hangPhase, o.hangP))
	}
	if o.invalidP > 0 {
		parts = append(parts, fmt.Sprintf("invalid p=%g how=%s", o.invalidP, o.invalidHow))
	}
	if o.slow > 0 {
		parts = append(parts, "slow="+o.slow.String())
	}
	if o.apiVersion != 0 {
		parts = append(parts, fmt.Sprintf("api-version=%d", o.apiVersion))
	}
	if o.kind != "cpu" {
		parts = append(parts, "kind="+o.kind)
	}
	if o.claimCurves {
		parts = append(parts, fmt.Sprintf("curves=%v", o.curves))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// envDefaults reads the environment variables that stand in for flags. A
// variable that does not parse is an error naming it.
type envDefaults struct {
	getenv func(string) string
	err    error
}

func (e *envDefaults) str(name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}

func (e *envDefaults) float(name string, def float64) float64 {
	return envParse(e, name, def, "a number", func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
}

func (e *envDefaults) duration(name string, def time.Duration) time.Duration {
	return envParse(e, name, def, "a duration", time.ParseDuration)
}

func (e *envDefaults) boolean(name string) bool {
	return envParse(e, name, false, "a boolean", strconv.ParseBool)
}

func (e *envDefaults) uint(name string, def uint64) uint64 {
	return envParse(e, name, def, "a non-negative integer", func(v string) (uint64, error) { return strconv.ParseUint(v, 10, 64) })
}

// envParse reads variable name through e: def when it is unset or empty, else
// its value as parse reads it. The first variable that does not parse is e's
// error, which says it is not what (a number, a duration...).
func envParse[T any](e *envDefaults, name string, def T, what string, parse func(string) (T, error)) T {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s=%q is not %s", name, v, what)
	}
	return x
}

// parseOptions reads the flags, each defaulting from its environment variable,
// and checks them.
func parseOptions(args []string, getenv func(string) string) (options, error) {
	var o options
	env := &envDefaults{getenv: getenv}
	fs := flag.NewFlagSet("faultbackend", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.crashPhase, "crash", env.str("ZKHOST_FAULT_CRASH", ""), "crash in this phase")
	fs.Float64Var(&o.crashP, "crash-p", env.float("ZKHOST_FAULT_CRASH_P", 1), "probability of the crash")
	fs.StringVar(&o.crashHow, "crash-how", "kill", "kill, exit or panic")
	fs.StringVar(&o.hangPhase, "hang", env.str("ZKHOST_FAULT_HANG", ""), "never answer in this phase")
	fs.Float64Var(&o.hangP, "hang-p", env.float("ZKHOST_FAULT_HANG_P", 1), "probability of the hang")
	fs.Float64Var(&o.invalidP, "invalid-p", env.float("ZKHOST_FAULT_INVALID_P", 0), "probability of an invalid proof")
	fs.StringVar(&o.invalidHow, "invalid-how", "negate", "negate or garbage")
	fs.DurationVar(&o.slow, "slow", env.duration("ZKHOST_FAULT_SLOW", 0), "sleep this long before each proof")
	fs.DurationVar(&o.midDelay, "mid-delay", 20*time.Millisecond, "how long a prove-mid crash lets the proof run")
	fs.BoolVar(&o.exitBeforeHandshake, "exit-before-handshake", env.boolean("ZKHOST_FAULT_EXIT_BEFORE_HANDSHAKE"), "exit with status 3 before serving")
	fs.StringVar(&o.stdoutNoise, "stdout-noise", env.str("ZKHOST_FAULT_STDOUT_NOISE", ""), "print this on stdout before serving")
	fs.IntVar(&o.apiVersion, "api-version", 0, "claim this backend API version (0: the real one)")
	fs.StringVar(&o.kind, "kind", "cpu", "claim this device kind")
	fs.IntVar(&o.maxInFlightClaim, "max-in-flight-claim", -1, "claim this MaxInFlight (-1: the CPU backend's own)")
	curves := fs.String("curves", "", `claim these curves, comma-separated ("none" for none; empty: the CPU backend's own)`)
	fs.Uint64Var(&o.seed, "seed", env.uint("ZKHOST_FAULT_SEED", 1), "seed of the random choices")
	fs.StringVar(&o.runFile, "run-file", "", "counter file mixed into the seed")
	fs.IntVar(&o.threads, "threads", 0, "CPU backend threads (0: all cores)")
	fs.IntVar(&o.maxInFlight, "max-in-flight", 1, "Prove calls accepted at once")
	if env.err != nil {
		return o, env.err
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *curves != "" {
		o.claimCurves = true
		if *curves != "none" {
			for _, c := range strings.Split(*curves, ",") {
				o.curves = append(o.curves, sdk.Curve(strings.TrimSpace(c)))
			}
		}
	}
	if err := checkPhase("-crash", o.crashPhase); err != nil {
		return o, err
	}
	if err := checkPhase("-hang", o.hangPhase); err != nil {
		return o, err
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"-crash-p", o.crashP}, {"-hang-p", o.hangP}, {"-invalid-p", o.invalidP}} {
		if p.v < 0 || p.v > 1 {
			return o, fmt.Errorf("%s is %g, want a probability from 0 to 1", p.name, p.v)
		}
	}
	if o.crashHow != "kill" && o.crashHow != "exit" && o.crashHow != "panic" {
		return o, fmt.Errorf("-crash-how is %q, want kill, exit or panic", o.crashHow)
	}
	if o.invalidHow != "negate" && o.invalidHow != "garbage" {
		return o, fmt.Errorf("-invalid-how is %q, want negate or garbage", o.invalidHow)
	}
	if o.slow < 0 || o.midDelay < 0 {
		return o, errors.New("-slow and -mid-delay must not be negative")
	}
	if o.apiVersion < 0 {
		return o, fmt.Errorf("-api-version is %d, want 0 or more", o.apiVersion)
	}
	if o.kind == "" {
		return o, errors.New("-kind is empty")
	}
	if o.threads < 0 || o.maxInFlight < 1 {
		return o, fmt.Errorf("-threads %d, -max-in-flight %d: want threads >= 0 and max-in-flight >= 1", o.threads, o.maxInFlight)
	}
	return o, nil
}

func checkPhase(flagName, p string) error {
	if p == "" {
		return nil
	}
	for _, q := range phases {
		if p == q {
			return nil
		}
	}
	return fmt.Errorf("%s is %q, want one of %s", flagName, p, strings.Join(phases, ", "))
}

// nextRun increments the counter in path (created at 0) under an exclusive lock
// and returns the new value; with no path it returns 0.
func nextRun(path string) (uint64, error) {
	if path == "" {
		return 0, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("run file: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return 0, fmt.Errorf("run file %s: lock: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, fmt.Errorf("run file %s: %w", path, err)
	}
	var n uint64
	if s := strings.TrimSpace(string(data)); s != "" {
		if n, err = strconv.ParseUint(s, 10, 64); err != nil {
			return 0, fmt.Errorf("run file %s holds %q, not a counter", path, s)
		}
	}
	n++
	if _, err := f.WriteAt([]byte(strconv.FormatUint(n, 10)+"\n"), 0); err != nil {
		return 0, fmt.Errorf("run file %s: %w", path, err)
	}
	return n, nil
}
