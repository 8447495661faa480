package config

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/zkhost/zkhost/host/api"
)

const examplePath = "../../examples/zkhost.toml"

// testEnv is a 16-core machine with 64 GiB of RAM, run by a user whose home is
// /home/op, with zkhost installed in /opt/zkhost/bin.
func testEnv() environ {
	return environ{
		memTotal:   func() (uint64, error) { return 64 << 30, nil },
		cpus:       16,
		executable: func() (string, error) { return "/opt/zkhost/bin/zkhost", nil },
		getenv:     func(string) string { return "" },
		homeDir:    func() (string, error) { return "/home/op", nil },
		workDir:    func() (string, error) { return "/work", nil },
	}
}

func mustParse(t *testing.T, text, source string, env environ) *Config {
	t.Helper()
	c, err := parse([]byte(text), source, env)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return c
}

func TestMinimalConfig(t *testing.T) {
	const text = `[api]
socket = "/path/to/zkhost.sock"
[[circuit]]
name = "merkle"
keys = "/path/to/keydir"
`
	c := mustParse(t, text, "/etc/zkhost/zkhost.toml", testEnv())
	if c.API.Socket != "/path/to/zkhost.sock" {
		t.Errorf("socket = %q", c.API.Socket)
	}
	want := []Circuit{{Name: "merkle", Keys: "/path/to/keydir", Class: api.ClassNormal}}
	if !reflect.DeepEqual(c.Circuits, want) {
		t.Errorf("circuits = %+v, want %+v", c.Circuits, want)
	}
	wantDev := []Device{{Backend: "/opt/zkhost/bin/zkhost-backend-cpu", Index: -1}}
	if !reflect.DeepEqual(c.Devices, wantDev) {
		t.Errorf("devices = %+v, want %+v", c.Devices, wantDev)
	}
	if c.StateDir != "/home/op/.local/state/zkhost" || c.Journal.Path != "/home/op/.local/state/zkhost/journal.db" {
		t.Errorf("state dir %q, journal %q", c.StateDir, c.Journal.Path)
	}
	// And on this machine, through the public API.
	if _, err := Parse([]byte(text), "zkhost.toml"); err != nil {
		t.Errorf("Parse on this machine: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, "", "", testEnv())
	want := &Config{
		Source:   "",
		StateDir: "/home/op/.local/state/zkhost",
		LogLevel: "info",
		API:      API{Config: api.Config{Socket: "/home/op/.local/state/zkhost/zkhost.sock", SocketMode: 0o600}},
		Budget: Budget{
			Bytes:                  54975581388, // 80% of 64 GiB, rounded down
			CriticalReserve:        5497558138,  // 10% of that
			BytesSetting:           Size{Percent: 80},
			CriticalReserveSetting: Size{Percent: 10},
			RAM:                    64 << 30,
		},
		Synthesis: Synthesis{Cores: 12, Workers: 12, Threads: 0},
		Devices:   []Device{{Backend: "/opt/zkhost/bin/zkhost-backend-cpu", Index: -1}},
		Journal:   Journal{Path: "/home/op/.local/state/zkhost/journal.db", Retention: 168 * time.Hour, ReserveBytes: DefaultJournalReserve},
		Keys:      Keys{IdleEviction: 30 * time.Minute, Preload: true},
		Timeline:  Timeline{Path: "/home/op/.local/state/zkhost/timeline.jsonl", MaxBytes: 64 << 20, Keep: 4},
		Retry:     Retry{MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: time.Minute},
		Health:    Health{CrashLimit: 3, CrashWindow: 10 * time.Minute},
		Limits:    Limits{StreamInputs: DefaultStreamInputs},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
}

func TestDefaultsFollowTheMachine(t *testing.T) {
	for _, tc := range []struct {
		cpus, workers, threads int
	}{{1, 1, 0}, {2, 2, 0}, {3, 3, 0}, {8, 6, 0}, {16, 12, 0}, {64, 48, 0}, {96, 72, 0}} {
		env := testEnv()
		env.cpus = tc.cpus
		c := mustParse(t, "", "", env)
		if c.Synthesis.Workers != tc.workers || c.Synthesis.Threads != tc.threads {
			t.Errorf("%d cores: workers %d threads %d, want %d and %d",
				tc.cpus, c.Synthesis.Workers, c.Synthesis.Threads, tc.workers, tc.threads)
		}
	}
	// An explicit worker count leaves threads to the daemon (0), within the
	// cores synthesis may use (12 of 16); explicit threads are kept.
	c := mustParse(t, "[synthesis]\nworkers = 6\n", "", testEnv())
	if c.Synthesis.Threads != 0 || c.Synthesis.Workers != 6 || c.Synthesis.Cores != 12 {
		t.Errorf("6 workers on 16 cores: %d workers, threads %d, %d cores; want 6, 0 (sized by the daemon), 12", c.Synthesis.Workers, c.Synthesis.Threads, c.Synthesis.Cores)
	}
	c = mustParse(t, "[synthesis]\nworkers = 4\nthreads = 3\n", "", testEnv())
	if c.Synthesis.Threads != 3 || c.Synthesis.Workers != 4 {
		t.Errorf("4 workers × 3 threads: got %d × %d", c.Synthesis.Workers, c.Synthesis.Threads)
	}

	env := testEnv()
	env.getenv = func(k string) string {
		return map[string]string{"XDG_STATE_HOME": "/var/state"}[k]
	}
	c = mustParse(t, "", "", env)
	if c.StateDir != "/var/state/zkhost" || c.API.Socket != "/var/state/zkhost/zkhost.sock" {
		t.Errorf("with XDG_STATE_HOME: state %q socket %q", c.StateDir, c.API.Socket)
	}
	env.getenv = func(k string) string {
		return map[string]string{"XDG_STATE_HOME": "relative/state"}[k]
	}
	if c = mustParse(t, "", "", env); c.StateDir != "/home/op/.local/state/zkhost" {
		t.Errorf("a relative XDG_STATE_HOME is ignored, got %q", c.StateDir)
	}
	c = mustParse(t, "state_dir = \"/srv/zk\"\n", "", testEnv())
	if c.API.Socket != "/srv/zk/zkhost.sock" || c.Journal.Path != "/srv/zk/journal.db" {
		t.Errorf("socket %q and journal %q do not follow state_dir", c.API.Socket, c.Journal.Path)
	}
}

func TestDefaultMatchesEmbedded(t *testing.T) {
	c, err := LoadDefault()
	if err != nil {
		t.Fatalf("LoadDefault: %v", err)
	}
	if d := Default(); !reflect.DeepEqual(c, d) {
		t.Errorf("embedded default.toml differs from Default():\n%+v\n%+v", c, d)
	}
	if c2, err := Load(""); err != nil || !reflect.DeepEqual(c, c2) {
		t.Errorf("Load(\"\") = %+v, %v; want the embedded default", c2, err)
	}
	if !bytes.Equal(DefaultTOML(), defaultTOML) {
		t.Error("DefaultTOML differs from the embedded file")
	}
}

func TestExampleLoads(t *testing.T) {
	c, err := Load(examplePath)
	if err != nil {
		t.Fatalf("Load(%s): %v", examplePath, err)
	}
	d := Default()
	d.Source = examplePath
	if !reflect.DeepEqual(c, d) {
		t.Errorf("example (all commented) is not the default:\n%+v\n%+v", c, d)
	}
	// The example is the embedded default: go:embed cannot reach examples/, so
	// the two files are kept identical by this test.
	example, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(example, defaultTOML) {
		t.Errorf("%s and default.toml differ; copy one onto the other", examplePath)
	}
}

// optionLine matches a commented-out option or table header in the example:
// "# key = value", "# [table]", "# [[table]]".
var optionLine = regexp.MustCompile(`^# ((\[\[?[a-z_.]+\]\]?)|([A-Za-z0-9_-]+ = .+))$`)

// uncomment turns the example's commented options into settings, stopping at
// the first line that matches stop (when stop is not "").
func uncomment(text, stop string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if stop != "" && line == stop {
			break
		}
		if optionLine.MatchString(line) {
			line = strings.TrimPrefix(line, "# ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// TestExampleDefaultsAreTrue writes out every default the example documents
// and checks it is the real default: the comments cannot drift from the code.
func TestExampleDefaultsAreTrue(t *testing.T) {
	text := uncomment(string(defaultTOML), "# [[circuit]]")
	if !strings.Contains(text, "\n[api]\n") || !strings.Contains(text, "\nbytes = \"80%\"") {
		t.Fatalf("uncommenting found no options:\n%s", text)
	}
	got := mustParse(t, text, "/etc/zkhost/zkhost.toml", testEnv())
	want := mustParse(t, "", "/etc/zkhost/zkhost.toml", testEnv())
	// Written out, cores and workers count as given; their values must agree.
	got.Synthesis.CoresSet, got.Synthesis.WorkersSet = false, false
	if !reflect.DeepEqual(got, want) {
		t.Errorf("documented defaults differ from the real ones:\n got %+v\nwant %+v", got, want)
	}
}

// TestExampleDocumentsEveryOption uncomments the whole example, samples
// included, checks it is a valid config, and checks that it sets every option
// the parser knows.
func TestExampleDocumentsEveryOption(t *testing.T) {
	text := uncomment(string(defaultTOML), "")
	c := mustParse(t, text, "/etc/zkhost/zkhost.toml", testEnv())
	if len(c.Circuits) != 3 || len(c.Devices) != 2 {
		t.Fatalf("samples: %d circuits, %d devices; want 3 and 2", len(c.Circuits), len(c.Devices))
	}
	if s := c.Circuits[2]; s.Synthesizer != "/usr/local/lib/zkhost/hintsynth" || len(s.SynthesizerSHA256) != 32 || s.SynthesizerTimeout != 5*time.Minute {
		t.Errorf("circuit[2] = %+v", s)
	}
	if c.Circuits[1].CCS != "/etc/zkhost/keys/porep/circuit.ccs" || c.Circuits[1].Class != api.ClassCritical {
		t.Errorf("circuit[1] = %+v", c.Circuits[1])
	}
	if d := c.Devices[1]; d.Selector == nil || d.Selector.Model != "H100" || d.Selector.MinMemory != 80<<30 {
		t.Errorf("device[1] = %+v", d)
	}
	if got := c.Devices[0].Options["max-in-flight"]; got != "3" {
		t.Errorf("device[0] options = %v", c.Devices[0].Options)
	}
	if got := c.Devices[0].Env["CUDA_MODULE_LOADING"]; got != "LAZY" {
		t.Errorf("device[0] env = %v", c.Devices[0].Env)
	}

	var doc map[string]any
	md, err := toml.Decode(text, &doc)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, k := range md.Keys() {
		set[k.String()] = true
	}
	ck := &checker{lines: lineIndex{}, env: testEnv(), base: "/", asked: map[string]bool{}}
	ck.config(doc)
	asked := ck.asked
	aliases := map[string]bool{"circuit.priority": true}
	var missing []string
	for k := range asked {
		if aliases[k] || strings.HasPrefix(k, "device.options.") {
			continue
		}
		if !set[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("options the example does not document: %v", missing)
	}
	if len(asked) < 40 {
		t.Errorf("only %d options seen; the walk is not reaching every table", len(asked))
	}
}

func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "zkhost.toml")
	text := `state_dir = "state"
[api]
socket = "run/zk.sock"
[[circuit]]
name = "c"
keys = "keys/c"
vk = "~/vk.bin"
[timeline]
path = "../timeline.jsonl"
`
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	for _, tc := range []struct{ got, want string }{
		{c.StateDir, filepath.Join(dir, "state")},
		{c.API.Socket, filepath.Join(dir, "run/zk.sock")},
		{c.Journal.Path, filepath.Join(dir, "state/journal.db")},
		{c.Circuits[0].Keys, filepath.Join(dir, "keys/c")},
		{c.Circuits[0].VK, filepath.Join(home, "vk.bin")},
		{c.Timeline.Path, filepath.Join(filepath.Dir(dir), "timeline.jsonl")},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	// A source given relative to the working directory resolves from there.
	c = mustParse(t, "state_dir = \"s\"\n", "conf/zkhost.toml", testEnv())
	if c.StateDir != "/work/conf/s" {
		t.Errorf("state_dir = %q, want /work/conf/s", c.StateDir)
	}
}

func TestValues(t *testing.T) {
	const text = `log_level = "DEBUG"
log_json = true
[api]
socket_mode = "0660"
socket_group = "zkhost"
tcp_address = "0.0.0.0:7443"
tls_cert = "/etc/zk/cert.pem"
tls_key = "/etc/zk/key.pem"
token_file = "/etc/zk/token"
web_address = "127.0.0.1:7080"
[budget]
bytes = "48GiB"
critical_reserve = "8GiB"
[synthesis]
cores = 15
workers = 3
threads = 5
[[circuit]]
name = "a.b-c_d"
keys = "/k"
priority = "High"
[[device]]
backend = "/bin/be"
sha256 = "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
index = 3
in_flight = 4
options = { A = "1", B = "two" }
[journal]
retention = "0s"
[keys]
idle_eviction = "1h30m"
[retry]
max_attempts = 5
backoff_base = "250ms"
backoff_max = "250ms"
[health]
crash_limit = 1
crash_window = "1h"
`
	c := mustParse(t, text, "/etc/zkhost.toml", testEnv())
	want := API{Config: api.Config{Socket: "/home/op/.local/state/zkhost/zkhost.sock", SocketMode: 0o660, SocketGroup: "zkhost", TCPAddr: "0.0.0.0:7443",
		Credentials: api.Credentials{TLSCertFile: "/etc/zk/cert.pem", TLSKeyFile: "/etc/zk/key.pem", TokenFile: "/etc/zk/token"}},
		WebAddress: "127.0.0.1:7080"}
	if !reflect.DeepEqual(c.API, want) {
		t.Errorf("api = %+v", c.API)
	}
	if c.LogLevel != "debug" || !c.LogJSON {
		t.Errorf("log %q json %v", c.LogLevel, c.LogJSON)
	}
	if c.Budget.Bytes != 48<<30 || c.Budget.CriticalReserve != 8<<30 {
		t.Errorf("budget = %+v", c.Budget)
	}
	if c.Synthesis != (Synthesis{Cores: 15, Workers: 3, Threads: 5, CoresSet: true, WorkersSet: true}) {
		t.Errorf("synthesis = %+v", c.Synthesis)
	}
	if c.Circuits[0].Class != api.ClassHigh {
		t.Errorf("class = %v", c.Circuits[0].Class)
	}
	sum, _ := hex.DecodeString("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
	wantDev := Device{Backend: "/bin/be", SHA256: sum,
		Index: 3, InFlight: 4, Options: map[string]string{"A": "1", "B": "two"}}
	if !reflect.DeepEqual(c.Devices, []Device{wantDev}) {
		t.Errorf("devices = %+v", c.Devices)
	}
	if c.Journal.Retention != 0 || c.Keys.IdleEviction != 90*time.Minute {
		t.Errorf("journal %+v keys %+v", c.Journal, c.Keys)
	}
	if c.Retry != (Retry{MaxAttempts: 5, BackoffBase: 250 * time.Millisecond, BackoffMax: 250 * time.Millisecond}) {
		t.Errorf("retry = %+v", c.Retry)
	}
	if c.Health != (Health{CrashLimit: 1, CrashWindow: time.Hour}) {
		t.Errorf("health = %+v", c.Health)
	}
}

func TestBudgetAgainstRAM(t *testing.T) {
	env := testEnv()
	env.memTotal = func() (uint64, error) { return 0, errors.New("no /proc/meminfo") }
	// An absolute budget does not need the RAM size.
	c := mustParse(t, "[budget]\nbytes = \"10GiB\"\ncritical_reserve = \"50%\"\n", "", env)
	if c.Budget.Bytes != 10<<30 || c.Budget.CriticalReserve != 5<<30 {
		t.Errorf("budget = %+v", c.Budget)
	}
	// The default percentage does, and says so.
	_, err := parse(nil, "", env)
	var ce *Error
	if !errors.As(err, &ce) || ce.Problems[0].Key != "budget.bytes" || !strings.Contains(err.Error(), "no /proc/meminfo") {
		t.Errorf("unknown RAM: got %v", err)
	}
}

func TestMemInfo(t *testing.T) {
	n, err := parseMemInfo(strings.NewReader("MemTotal:       131891012 kB\nMemFree: 1 kB\n"))
	if err != nil || n != 131891012*1024 {
		t.Errorf("parseMemInfo = %d, %v", n, err)
	}
	if _, err := parseMemInfo(strings.NewReader("MemFree: 1 kB\n")); err == nil {
		t.Error("no MemTotal: want an error")
	}
	if _, err := parseMemInfo(strings.NewReader("MemTotal: lots\n")); err == nil {
		t.Error("bad MemTotal: want an error")
	}
	if n, ok := parseCgroupLimit("8589934592\n"); !ok || n != 8<<30 {
		t.Errorf("cgroup limit = %d %v", n, ok)
	}
	if _, ok := parseCgroupLimit("max\n"); ok {
		t.Error(`"max" is no limit`)
	}
	if n, err := systemMemory(); err != nil || n == 0 {
		t.Errorf("systemMemory on this machine = %d, %v", n, err)
	}
}

func TestTimelineSettings(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Timeline
	}{
		{"", Timeline{Path: "/home/op/.local/state/zkhost/timeline.jsonl", MaxBytes: 64 << 20, Keep: 4}},
		{"[timeline]\nenabled = false\n", Timeline{MaxBytes: 64 << 20, Keep: 4}},
		{"[timeline]\npath = \"/var/log/zk.jsonl\"\nmax_size = \"1GiB\"\nkeep = 0\n", Timeline{Path: "/var/log/zk.jsonl", MaxBytes: 1 << 30}},
		{"[timeline]\nmax_size = 0\n", Timeline{Path: "/home/op/.local/state/zkhost/timeline.jsonl", Keep: 4}},
		{"state_dir = \"/srv/zk\"\n", Timeline{Path: "/srv/zk/timeline.jsonl", MaxBytes: 64 << 20, Keep: 4}},
	} {
		if c := mustParse(t, tc.text, "/etc/zkhost/zkhost.toml", testEnv()); c.Timeline != tc.want {
			t.Errorf("%q: timeline %+v, want %+v", tc.text, c.Timeline, tc.want)
		}
	}
}

func TestDeviceOptionsAndEnv(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"option not a flag", "[[device]]\n[device.options]\n\"a b\" = \"1\"\n", "not a flag name"},
		{"env bad name", "[[device]]\n[device.env]\n\"1X\" = \"1\"\n", "not an environment variable name"},
		{"env reserved", "[[device]]\n[device.env]\nZKHOST_DEVICE_INDEX = \"3\"\n", "reserved"},
		{"env not a string", "[[device]]\n[device.env]\nCUDA_MODULE_LOADING = 1\n", "device[0].env.CUDA_MODULE_LOADING"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.text), "/etc/zkhost/zkhost.toml", testEnv())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
	c := mustParse(t, "[[device]]\n[device.options]\nthreads = \"2\"\n[device.env]\nGOGC = \"50\"\n", "/etc/zkhost/zkhost.toml", testEnv())
	if d := c.Devices[0]; d.Options["threads"] != "2" || d.Env["GOGC"] != "50" {
		t.Errorf("device = %+v", d)
	}
}
