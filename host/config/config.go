package config

import (
	"bytes"
	_ "embed"
	"fmt"
	"github.com/zkhost/zkhost/host/api"
	"os"
	"time"
)

// DefaultBackendName is the file name of the CPU backend binary, which the
// default device runs from the directory of the zkhost executable.
const DefaultBackendName = "zkhost-backend-cpu"

// DefaultSource is the Source of a config read from the embedded default.
const DefaultSource = "default.toml (built in)"

// DefaultJournalReserve is the space the journal keeps in reserve by default:
// room for the proofs and state changes of thousands of partitions (a proof
// record is under 1 KiB) after the disk fills.
const DefaultJournalReserve = 64 << 20

// MinJournalReserve and MaxJournalReserve bound [journal] reserve (besides 0,
// no reserve): less holds too few records to matter, more than the most is a
// slip (a unit too large) that would take a disk's space for nothing.
const (
	MinJournalReserve = 1 << 20
	MaxJournalReserve = 64 << 30
)

//go:embed default.toml
var defaultTOML []byte

// Config is the daemon's configuration with every default filled in, every
// size resolved to bytes and every path absolute.
type Config struct {
	// Source is the file the config was read from, or DefaultSource.
	Source string
	// StateDir holds the socket, the journal and other state by default.
	StateDir string
	// LogLevel is one of trace, debug, info, warn, error.
	LogLevel string
	// LogJSON makes logs JSON lines instead of text.
	LogJSON bool

	// API is where clients reach the daemon, the [[client]] tables included
	// (API.Clients).
	API API
	// Budget is the host memory the daemon may commit.
	Budget Budget
	// Synthesis sizes the CPU synthesis pool.
	Synthesis Synthesis
	// Circuits are the circuits the daemon serves; none by default.
	Circuits []Circuit
	// Devices are the backends to start, one process each; by default one
	// CPU backend.
	Devices []Device
	// Journal is the durable job store.
	Journal Journal
	// Keys governs proving keys held in memory.
	Keys Keys
	// Timeline is the phase event log.
	Timeline Timeline
	// Retry governs retries of partitions and restarts of backends.
	Retry Retry
	// Health decides when a device is given up on.
	Health Health
	// Limits bound the work waiting in the daemon.
	Limits Limits
	// Cluster, when set, shares the work queue with other hosts (cluster.go).
	Cluster *Cluster
}

// Limits bound the partitions waiting in the daemon (queued, synthesizing,
// staged or proving: not yet verified). A submission that would pass one is
// refused with ResourceExhausted naming it. 0 means no limit.
type Limits struct {
	// QueuedPartitions bounds the partitions of all clients together.
	QueuedPartitions int
	// QueuedPartitionsPerClient bounds each client's partitions.
	QueuedPartitionsPerClient int
	// CriticalReserve is the part of QueuedPartitions only critical jobs may
	// take: other classes together stop at QueuedPartitions minus it, as the
	// memory budget holds back its critical_reserve, so batch work filling
	// the daemon never shuts out a deadline proof. By default
	// DefaultCriticalReserve(QueuedPartitions).
	CriticalReserve int
	// StreamInputs bounds the inputs (witnesses or wire assignments) one
	// streamed submission may declare; DefaultStreamInputs by default.
	StreamInputs int
}

// DefaultStreamInputs is the default of limits.stream_inputs: far more
// partitions than a proof needs (a Filecoin PoRep has 10), far fewer than
// the API's ceiling of 65,536, which let one stream declare a job no
// operator meant to accept.
const DefaultStreamInputs = 4096

// DefaultCriticalReserve is the default of limits.critical_reserve for a
// queued_partitions limit of queued: a tenth of it, rounded up, as the
// budget's default critical_reserve is a tenth of the budget, but always
// leaving other classes at least one partition; 0 without a limit.
func DefaultCriticalReserve(queued int) int {
	if queued <= 1 {
		return 0
	}
	return min((queued+9)/10, queued-1)
}

// API is where clients reach the daemon: the listeners' settings exactly as
// api.Listen takes them, so that serve hands them over as they are, and the
// status page's address, which the web server takes. Clients holds the
// [[client]] tables, TCP clients with tokens of their own; none by default
// (the [api] token_file is the admin's). MaxMessageBytes and
// StreamIdleTimeout are not settings: they stay zero, the API's defaults.
type API struct {
	api.Config
	// WebAddress, when set, is a host:port for the status page.
	WebAddress string
}

// Budget is the host memory the daemon may commit (synthesized partitions,
// mapped keys).
type Budget struct {
	// Bytes is the whole budget.
	Bytes uint64
	// CriticalReserve is the part of Bytes that only critical work may use.
	CriticalReserve uint64
	// BytesSetting and CriticalReserveSetting are the values as written
	// (percentages stay percentages), for display.
	BytesSetting           Size
	CriticalReserveSetting Size
	// RAM is the memory size percentages were taken of (MemTotal, or the
	// cgroup limit when lower); 0 when it could not be read.
	RAM uint64
}

// Synthesis sizes the CPU synthesis pool.
type Synthesis struct {
	// Cores is how many cores synthesis may use in all: the daemon lets no
	// more than Cores solver threads run at once, the critical lane's
	// included, so the rest of the machine stays free for staging,
	// verification, the backends and whatever else runs there.
	Cores int
	// Workers is how many partitions are synthesized at once.
	Workers int
	// Threads is how many threads each worker's solver uses.
	Threads int
	// CoresSet and WorkersSet say the config gave cores and workers: the
	// daemon sizes the ones not given to its devices (three quarters of the
	// cores, or all but one per device when every device evaluates A and B
	// itself and the backends need next to no CPU).
	CoresSet, WorkersSet bool
}

// Circuit is one circuit the daemon proves.
type Circuit struct {
	// Name is how clients name the circuit.
	Name string
	// Keys is the circuit's key directory; empty when CCS, PK and VK are all
	// given.
	Keys string
	// CCS, PK and VK name the constraint system, proving key and verifying key
	// files individually; each is empty when the file is taken from Keys.
	CCS string
	PK  string
	VK  string
	// Class is the priority class of the circuit's jobs when a submission
	// names none.
	Class api.Class
	// Synthesizer, when set, is a synthesizer plugin binary that solves the
	// circuit's partitions (a circuit with hints the host does not know, or
	// another stack's); empty means the host's built-in gnark solver.
	Synthesizer string
	// SynthesizerSHA256 is the digest the synthesizer binary must have; nil
	// when it is not pinned.
	SynthesizerSHA256 Digest
	// SynthesizerTimeout bounds one partition's synthesis by the plugin: one
	// that has not answered by then is killed and handled as crashed. Zero
	// derives the bound from the circuit's size.
	SynthesizerTimeout time.Duration
}

// Device is one backend process and the device it owns.
type Device struct {
	// Backend is the backend binary.
	Backend string
	// SHA256 is the digest the backend binary must have; nil when the binary
	// is not pinned.
	SHA256 Digest
	// Index is the device's index among the backend's devices, or -1 when the
	// config names none (then Selector, or the backend's own default, picks).
	Index int
	// Selector picks a device by what it is rather than where it sits; nil
	// when not set.
	Selector *Selector
	// InFlight overrides how many partitions the device holds at once; 0 means
	// the number the backend declares.
	InFlight int
	// Options are passed to the backend as command-line flags, -KEY=VALUE, in the
	// order of their keys.
	Options map[string]string
	// Env holds environment variables set for the backend process (beside the
	// host's own environment, which it inherits).
	Env map[string]string
}

// Selector picks a device by model and memory.
type Selector struct {
	// Model, when set, must appear in the device's model name (ignoring case).
	Model string
	// MinMemory, when above zero, is the least device memory accepted, in bytes.
	MinMemory uint64
}

// Journal is the durable job store.
type Journal struct {
	// Path is the journal's database file.
	Path string
	// Retention is how long finished jobs are kept; 0 keeps them forever.
	Retention time.Duration
	// ReserveBytes is space the journal holds in a file beside it, released
	// when the disk fills so that progress on accepted jobs can still be
	// recorded; 0 keeps no reserve.
	ReserveBytes uint64
}

// Keys governs proving keys held in memory.
type Keys struct {
	// IdleEviction unloads a key unused this long; 0 never unloads.
	IdleEviction time.Duration
	// Preload loads every circuit's key on every device when the daemon
	// starts, in the background, so no job waits for a key load; on by
	// default. A key a device cannot hold is loaded on demand later.
	Preload bool
}

// Timeline is the phase event log. The daemon keeps it by default, so that
// `zkhost timeline` can show where the time went after the fact.
type Timeline struct {
	// Path is the file the daemon appends phase events to; empty when the
	// timeline is off (enabled = false). The default is timeline.jsonl in
	// the state directory.
	Path string
	// MaxBytes is the size past which the file is rotated (renamed Path.1,
	// older ones shifted); 0 never rotates. Keep is how many rotated files
	// are kept.
	MaxBytes uint64
	Keep     int
}

// Retry governs retrying failed partitions and restarting crashed backends.
type Retry struct {
	// MaxAttempts is how many times a partition is tried before its job fails.
	MaxAttempts int
	// BackoffBase is the first delay before a retry or restart; each following
	// one doubles, up to BackoffMax.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// ProveTimeout, when above zero, bounds one Prove call: a backend that has
	// not answered by then is killed and handled as crashed. Zero derives the
	// bound from the partition's size.
	ProveTimeout time.Duration
}

// Health decides when a device is given up on.
type Health struct {
	// CrashLimit crashes within CrashWindow take a device out of service.
	CrashLimit  int
	CrashWindow time.Duration
}

// Load reads the config file at path. An empty path loads the embedded default
// (see LoadDefault).
func Load(path string) (*Config, error) {
	if path == "" {
		return LoadDefault()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path)
}

// LoadDefault parses the embedded default config, the one `zkhost serve` runs
// without --config.
func LoadDefault() (*Config, error) {
	return Parse(defaultTOML, DefaultSource)
}

// DefaultTOML returns the text of the embedded default config: every option,
// commented out, with its default. It is a starting point for a config file.
func DefaultTOML() []byte { return bytes.Clone(defaultTOML) }

// Parse reads a config from data. Source names the data in errors, and
// relative paths in it resolve against source's directory (the working
// directory when source is empty or DefaultSource). A rejected config returns
// an *Error listing every problem.
func Parse(data []byte, source string) (*Config, error) {
	return parse(data, source, systemEnviron())
}

// Default returns the config an empty file gives on this machine. A default
// that cannot be worked out here (RAM size, home directory) is left zero; Parse
// reports those as errors instead.
func Default() *Config {
	c, _ := build(nil, DefaultSource, "", lineIndex{}, systemEnviron())
	return c
}
