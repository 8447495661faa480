package config

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/zkhost/zkhost/host/api"
)

// maxThreads bounds synthesis.cores, workers and threads: far above any
// machine's cores, low enough that a slip cannot ask for millions of threads.
const maxThreads = 4096

// logLevels are hclog's level names.
var logLevels = []string{"trace", "debug", "info", "warn", "error"}

func parse(data []byte, source string, env environ) (*Config, error) {
	// Decoding into a generic map, not a struct, lets us check every key
	// ourselves and report all problems, where toml's struct decoding stops at
	// the first and cannot tell one [[device]] from another.
	doc := map[string]any{}
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, syntaxError(source, err)
	}
	c, probs := build(doc, source, baseDir(source, env), indexLines(string(data)), env)
	if len(probs) > 0 {
		return nil, &Error{Problems: probs}
	}
	return c, nil
}

// baseDir is the directory relative paths in source resolve against.
func baseDir(source string, env environ) string {
	wd, err := env.workDir()
	if err != nil {
		wd = "."
	}
	if source == "" || source == DefaultSource {
		return wd
	}
	if !filepath.IsAbs(source) {
		source = filepath.Join(wd, source)
	}
	return filepath.Dir(source)
}

// checker collects the problems found while building a Config.
type checker struct {
	source string
	lines  lineIndex
	env    environ
	base   string
	probs  []Problem
	// asked records every key path the checker looked for, with array
	// indices dropped ("device.selector.model"); tests use it to check that
	// the example config documents every option.
	asked map[string]bool
}

func (ck *checker) errorf(key, format string, args ...any) {
	ck.probs = append(ck.probs, Problem{
		Source:  ck.source,
		Line:    ck.lines.line(key),
		Key:     key,
		Message: fmt.Sprintf(format, args...),
	})
}

// build makes a Config from a decoded document (nil for an empty one).
func build(doc map[string]any, source, base string, lines lineIndex, env environ) (*Config, []Problem) {
	ck := &checker{source: source, lines: lines, env: env, base: base, asked: map[string]bool{}}
	if base == "" {
		ck.base = baseDir("", env)
	}
	c := ck.config(doc)
	sortProblems(ck.probs)
	return c, ck.probs
}

func (ck *checker) config(doc map[string]any) *Config {
	env := ck.env
	root := ck.table("", doc)
	c := &Config{Source: ck.source, LogLevel: "info"}

	if dir, ok := root.path("state_dir"); ok {
		c.StateDir = dir
	} else if dir, err := env.defaultStateDir(); err == nil {
		c.StateDir = dir
	} else {
		ck.errorf("state_dir", "%v", err)
	}
	if lvl, ok := root.str("log_level"); ok {
		lvl = strings.ToLower(strings.TrimSpace(lvl))
		if contains(logLevels, lvl) {
			c.LogLevel = lvl
		} else {
			ck.errorf(root.key("log_level"), "unknown level %q: want one of %s", lvl, strings.Join(logLevels, ", "))
		}
	}
	if v, ok := root.boolean("log_json"); ok {
		c.LogJSON = v
	}

	c.API = ck.api(root.sub("api"), c.StateDir)
	c.Budget = ck.budget(root.sub("budget"))
	c.Synthesis = ck.synthesis(root.sub("synthesis"))
	for _, t := range root.list("circuit") {
		c.Circuits = append(c.Circuits, ck.circuit(t))
	}
	ck.uniqueCircuits(c.Circuits)
	devices := root.list("device")
	for _, t := range devices {
		c.Devices = append(c.Devices, ck.device(t))
	}
	if _, present := root.lookup("device"); present && len(devices) == 0 {
		// An empty list is not "no [[device]] tables": someone wrote it on
		// purpose, and a daemon without devices proves nothing.
		ck.errorf(root.key("device"), "an empty list: configure at least one [[device]], or leave the key out for the default CPU backend")
	}
	if len(devices) == 0 {
		c.Devices = []Device{{Backend: env.defaultBackend(), Index: -1}}
	}
	ck.uniqueDevices(c.Devices)

	c.Journal = Journal{Retention: 168 * time.Hour, ReserveBytes: DefaultJournalReserve}
	if c.StateDir != "" {
		c.Journal.Path = filepath.Join(c.StateDir, "journal.db")
	}
	j := root.sub("journal")
	if p, ok := j.path("path"); ok {
		c.Journal.Path = p
	}
	if d, ok := j.duration("retention", span{time.Minute, 10 * 365 * 24 * time.Hour, "keeps finished jobs forever"}); ok {
		c.Journal.Retention = d
	}
	if s, ok := j.size("reserve"); ok {
		switch {
		case s.Percent > 0:
			ck.errorf(j.key("reserve"), "want an absolute size such as \"64MiB\", not a share")
		case s.Bytes > 0 && s.Bytes < MinJournalReserve:
			ck.errorf(j.key("reserve"), "%s is below the least allowed, %s (\"0\" keeps no reserve)", FormatBytes(s.Bytes), FormatBytes(MinJournalReserve))
		case s.Bytes > MaxJournalReserve:
			ck.errorf(j.key("reserve"), "%s is above the most allowed, %s: the reserve only has to hold the journal writes of jobs already accepted", FormatBytes(s.Bytes), FormatBytes(MaxJournalReserve))
		default:
			c.Journal.ReserveBytes = s.Bytes
		}
	}
	j.finish()

	c.Keys = Keys{IdleEviction: 30 * time.Minute, Preload: true}
	k := root.sub("keys")
	if d, ok := k.duration("idle_eviction", span{time.Minute, 7 * 24 * time.Hour, "never unloads"}); ok {
		c.Keys.IdleEviction = d
	}
	if v, ok := k.boolean("preload"); ok {
		c.Keys.Preload = v
	}
	k.finish()

	c.Timeline = Timeline{MaxBytes: 64 << 20, Keep: 4}
	if c.StateDir != "" {
		c.Timeline.Path = filepath.Join(c.StateDir, "timeline.jsonl")
	}
	tl := root.sub("timeline")
	if p, ok := tl.optPath("path"); ok {
		c.Timeline.Path = p
	}
	if sz, ok := tl.size("max_size"); ok {
		if sz.IsPercent() {
			ck.errorf(tl.key("max_size"), "a percentage makes no sense here: give a size like \"64MiB\", or 0 never to rotate")
		} else if sz.Bytes > 0 && sz.Bytes < 64<<10 {
			ck.errorf(tl.key("max_size"), "%s is below the least allowed, 64KiB (0 never rotates)", FormatBytes(sz.Bytes))
		} else if sz.Bytes > 64<<30 {
			ck.errorf(tl.key("max_size"), "%s is above the most allowed, 64GiB (0 never rotates)", FormatBytes(sz.Bytes))
		} else {
			c.Timeline.MaxBytes = sz.Bytes
		}
	}
	if n, ok := tl.integer("keep", 0, 100); ok {
		c.Timeline.Keep = n
	}
	if on, ok := tl.boolean("enabled"); ok && !on {
		c.Timeline.Path = ""
	}
	tl.finish()

	for _, t := range root.list("client") {
		c.API.Clients = append(c.API.Clients, ck.client(t))
	}
	ck.uniqueClients(c.API.Clients)
	lim := root.sub("limits")
	if n, ok := lim.integer("queued_partitions", 0, math.MaxInt32); ok {
		c.Limits.QueuedPartitions = n
	}
	if n, ok := lim.integer("queued_partitions_per_client", 0, math.MaxInt32); ok {
		c.Limits.QueuedPartitionsPerClient = n
	}
	c.Limits.CriticalReserve = DefaultCriticalReserve(c.Limits.QueuedPartitions)
	if n, ok := lim.integer("critical_reserve", 0, math.MaxInt32); ok {
		if q := c.Limits.QueuedPartitions; q > 0 && n >= q {
			ck.errorf(lim.key("critical_reserve"), "%d is not below limits.queued_partitions (%d): other classes would get no room", n, q)
		} else {
			c.Limits.CriticalReserve = n
		}
	}
	c.Limits.StreamInputs = DefaultStreamInputs
	if n, ok := lim.integer("stream_inputs", 0, 65536); ok {
		c.Limits.StreamInputs = n
	}
	lim.finish()

	c.Retry = ck.retry(root.sub("retry"))
	c.Health = Health{CrashLimit: 3, CrashWindow: 10 * time.Minute}
	h := root.sub("health")
	if n, ok := h.integer("crash_limit", 1, 1000); ok {
		c.Health.CrashLimit = n
	}
	if d, ok := h.duration("crash_window", span{time.Second, 7 * 24 * time.Hour, ""}); ok {
		c.Health.CrashWindow = d
	}
	h.finish()
	c.Cluster = ck.cluster(root, c.StateDir)
	if c.Cluster != nil && c.Cluster.Role == RoleSynthesize {
		// A synthesis host proves nothing: no backend runs on it.
		if len(devices) > 0 {
			ck.errorf(root.key("device"), "cluster.role = %q runs no backend: remove the [[device]] tables, or set cluster.role = %q", RoleSynthesize, RoleProve)
		}
		c.Devices = nil
	}

	root.finish()
	return c
}

func (ck *checker) api(t *table, stateDir string) API {
	a := API{Config: api.Config{SocketMode: api.DefaultSocketMode}}
	if p, ok := t.path("socket"); ok {
		a.Socket = p
	} else if stateDir != "" {
		a.Socket = filepath.Join(stateDir, "zkhost.sock")
	}
	if len(a.Socket) > api.MaxSocketPath {
		ck.errorf(t.key("socket"), "%q is %d bytes, longer than a unix socket path may be (%d); set a shorter api.socket",
			a.Socket, len(a.Socket), api.MaxSocketPath)
	}
	if v, ok := t.lookup("socket_mode"); ok {
		if m, err := parseMode(v); err != nil {
			ck.errorf(t.key("socket_mode"), "%v", err)
		} else {
			a.SocketMode = m
		}
	}
	// Optional settings take "" as unset, so the commented default in
	// default.toml can be uncommented as it is.
	a.SocketGroup, _ = t.str("socket_group")
	if addr, ok := t.str("tcp_address"); ok && addr != "" {
		if err := checkHostPort(addr); err != nil {
			ck.errorf(t.key("tcp_address"), "%v", err)
		}
		a.TCPAddr = addr
	}
	a.TLSCertFile, _ = t.optPath("tls_cert")
	a.TLSKeyFile, _ = t.optPath("tls_key")
	a.TokenFile, _ = t.optPath("token_file")
	if a.TCPAddr != "" {
		// The TCP listener reaches beyond this machine: it is never plain
		// text and never open.
		var missing []string
		for _, f := range []struct{ key, val string }{{"tls_cert", a.TLSCertFile}, {"tls_key", a.TLSKeyFile}, {"token_file", a.TokenFile}} {
			if f.val == "" {
				missing = append(missing, "api."+f.key)
			}
		}
		if len(missing) > 0 {
			ck.errorf(t.key("tcp_address"), "TCP needs TLS and a bearer token: set %s", strings.Join(missing, ", "))
		}
	} else {
		for _, f := range []struct{ key, val string }{{"tls_cert", a.TLSCertFile}, {"tls_key", a.TLSKeyFile}, {"token_file", a.TokenFile}} {
			if f.val != "" {
				ck.errorf(t.key(f.key), "set without api.tcp_address, which is the only listener that uses it")
			}
		}
	}
	if addr, ok := t.str("web_address"); ok && addr != "" {
		if err := checkHostPort(addr); err != nil {
			ck.errorf(t.key("web_address"), "%v", err)
		} else if !api.IsLoopback(addr) && a.TCPAddr == "" {
			// The rule of tcp_address: off this machine, TLS and a token.
			ck.errorf(t.key("web_address"), "%s is not a loopback address: the status page and /metrics are served off this machine only over TLS with a bearer token; "+
				"set api.tcp_address, api.tls_cert, api.tls_key and api.token_file (the page uses the same), or bind 127.0.0.1", addr)
		}
		a.WebAddress = addr
	}
	t.finish()
	return a
}

// parseMode reads a permission mode written as an octal string ("0660"). An
// integer is refused: 660 and 0o660 decode to different numbers and nothing
// tells which one the author meant.
func parseMode(v any) (fs.FileMode, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("want an octal string like \"0660\", got %s", describe(v))
	}
	s = strings.TrimPrefix(strings.TrimSpace(s), "0o")
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o777 {
		return 0, fmt.Errorf("bad mode %q: want octal permission bits like \"0660\"", v)
	}
	if m&0o600 != 0o600 {
		return 0, fmt.Errorf("mode %q leaves the daemon's own user without read and write", v)
	}
	return fs.FileMode(m), nil
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad address %q: want host:port", addr)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("bad address %q: port must be a number from 1 to 65535", addr)
	}
	return nil
}

func (ck *checker) budget(t *table) Budget {
	b := Budget{BytesSetting: Size{Percent: 80}, CriticalReserveSetting: Size{Percent: 10}}
	if s, ok := t.size("bytes"); ok {
		b.BytesSetting = s
	}
	if s, ok := t.size("critical_reserve"); ok {
		b.CriticalReserveSetting = s
	}
	ram, ramErr := ck.env.memTotal()
	if ramErr == nil {
		b.RAM = ram
	}
	switch {
	case b.BytesSetting.IsPercent() && ramErr != nil:
		ck.errorf(t.key("bytes"), "%s is a share of RAM, but %v; give an absolute size such as \"64GiB\"", b.BytesSetting, ramErr)
	case b.BytesSetting.Resolve(ram) == 0:
		ck.errorf(t.key("bytes"), "the budget must be above zero")
	case ramErr == nil && b.BytesSetting.Resolve(ram) > ram:
		ck.errorf(t.key("bytes"), "%s is more than this machine's RAM (%s)", b.BytesSetting, FormatBytes(ram))
	default:
		b.Bytes = b.BytesSetting.Resolve(ram)
	}
	if b.Bytes > 0 {
		b.CriticalReserve = b.CriticalReserveSetting.Resolve(b.Bytes)
		if b.CriticalReserve >= b.Bytes {
			ck.errorf(t.key("critical_reserve"), "%s is not below budget.bytes (%s)", b.CriticalReserveSetting, FormatBytes(b.Bytes))
			b.CriticalReserve = 0
		}
	}
	t.finish()
	return b
}

func (ck *checker) synthesis(t *table) Synthesis {
	cpus := max(1, ck.env.cpus)
	// Three quarters of the cores by default (12 of 16):
	// synthesis is not the only thing the machine does.
	s := Synthesis{Cores: max(1, cpus-cpus/4)}
	if n, ok := t.integer("cores", 1, maxThreads); ok {
		s.Cores, s.CoresSet = n, true
	}
	// A worker per core by default: under a backlog partitions are solved a
	// thread each, many at once, which feeds a device best (the daemon gives a
	// partition more threads when its circuit has wide levels and few
	// partitions wait: Threads 0).
	s.Workers = s.Cores
	workersSet := false
	if n, ok := t.integer("workers", 1, maxThreads); ok {
		s.Workers, workersSet = n, true
	}
	s.WorkersSet = workersSet
	threadsSet := false
	if n, ok := t.integer("threads", 0, maxThreads); ok {
		s.Threads, threadsSet = n, true
	}
	// Sized by the daemon (Threads 0), a partition takes at least one thread.
	if threads := max(1, s.Threads); s.Workers*threads > s.Cores {
		key := t.key("cores")
		if threadsSet {
			key = t.key("threads")
		} else if workersSet {
			key = t.key("workers")
		}
		ck.errorf(key, "workers (%d) × threads (%d) = %d solver threads, more than synthesis.cores (%d) allows; lower workers or threads, or raise cores",
			s.Workers, threads, s.Workers*threads, s.Cores)
	}
	t.finish()
	return s
}

// client reads one [[client]]: a name, a token file, whether it is an admin.
// Tokens are for the TCP listener: api.Listen refuses clients without it.
func (ck *checker) client(t *table) api.ClientConfig {
	var c api.ClientConfig
	if name, ok := t.str("name"); ok {
		switch err := checkName(name); {
		case err != nil:
			ck.errorf(t.key("name"), "%v", err)
		case name == "admin" || strings.HasPrefix(name, "uid"):
			ck.errorf(t.key("name"), "%q is reserved (\"admin\" is the [api] token_file's client, \"uid:N\" a unix-socket peer's)", name)
		}
		c.Name = name
	} else if _, present := t.m["name"]; !present {
		ck.errorf(t.at, "missing name")
	}
	if p, ok := t.path("token_file"); ok {
		c.TokenFile = p
	} else if _, present := t.m["token_file"]; !present {
		ck.errorf(t.at, "missing token_file (a file holding the client's bearer token)")
	}
	if v, ok := t.boolean("admin"); ok {
		c.Admin = v
	}
	t.finish()
	return c
}

// uniqueClients reports a client name used twice.
func (ck *checker) uniqueClients(cs []api.ClientConfig) {
	seen := map[string]int{}
	for i, c := range cs {
		if j, dup := seen[c.Name]; dup && c.Name != "" {
			ck.errorf(joinKey(elem("client", i), "name"), "%q is already the name of client[%d]", c.Name, j)
		}
		seen[c.Name] = i
	}
}

func (ck *checker) circuit(t *table) Circuit {
	c := Circuit{Class: api.ClassNormal}
	if name, ok := t.str("name"); ok {
		if err := checkName(name); err != nil {
			ck.errorf(t.key("name"), "%v", err)
		}
		c.Name = name
	} else if _, present := t.m["name"]; !present {
		ck.errorf(t.at, "missing name")
	}
	c.Keys, _ = t.optPath("keys")
	c.CCS, _ = t.optPath("ccs")
	c.PK, _ = t.optPath("pk")
	c.VK, _ = t.optPath("vk")
	if c.Keys == "" {
		var missing []string
		for _, f := range []struct{ key, val string }{{"ccs", c.CCS}, {"pk", c.PK}, {"vk", c.VK}} {
			if f.val == "" {
				missing = append(missing, f.key)
			}
		}
		if len(missing) > 0 {
			ck.errorf(t.at, "missing keys (a key directory), or else %s", strings.Join(missing, ", "))
		}
	}
	ck.synthesizer(t, &c)
	// "priority" is accepted as another name for "class"; both at once would
	// leave the reader guessing which wins.
	_, hasClass := t.m["class"]
	_, hasPriority := t.m["priority"]
	if hasClass && hasPriority {
		ck.errorf(t.key("priority"), "set together with class, which it is another name for; keep one")
	}
	for _, key := range []string{"class", "priority"} {
		if s, ok := t.str(key); ok {
			if cl, err := api.ParseClass(s); err != nil {
				ck.errorf(t.key(key), "%v", err)
			} else {
				c.Class = cl
			}
		}
	}
	t.finish()
	return c
}

// synthesizer reads a circuit's synthesizer plugin keys: the binary, its
// optional SHA-256 and timeout. The two others without a binary are errors: a
// pin or a timeout for nothing is a mistake.
func (ck *checker) synthesizer(t *table, c *Circuit) {
	c.Synthesizer, _ = t.optPath("synthesizer")
	if s, ok := t.str("synthesizer_sha256"); ok {
		if sum, err := ParseDigest(s); err != nil {
			ck.errorf(t.key("synthesizer_sha256"), "%v", err)
		} else {
			c.SynthesizerSHA256 = sum
		}
		if c.Synthesizer == "" {
			ck.errorf(t.key("synthesizer_sha256"), "set without synthesizer (the binary it pins)")
		}
	}
	if d, ok := t.duration("synthesizer_timeout", span{time.Second, 24 * time.Hour, ""}); ok {
		c.SynthesizerTimeout = d
		if c.Synthesizer == "" {
			ck.errorf(t.key("synthesizer_timeout"), "set without synthesizer (the plugin it bounds)")
		}
	}
}

// checkName keeps circuit names to what is safe in file names, metrics labels
// and log lines.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("empty name")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("name %q has %q: use letters, digits, '-', '_' and '.'", name, r)
		}
	}
	return nil
}

func (ck *checker) uniqueCircuits(cs []Circuit) {
	seen := map[string]int{}
	for i, c := range cs {
		if c.Name == "" {
			continue
		}
		if j, dup := seen[c.Name]; dup {
			ck.errorf(joinKey(elem("circuit", i), "name"), "%q is already the name of circuit[%d]", c.Name, j)
			continue
		}
		seen[c.Name] = i
	}
}

func (ck *checker) device(t *table) Device {
	d := Device{Index: -1}
	if p, ok := t.path("backend"); ok {
		d.Backend = p
	} else {
		d.Backend = ck.env.defaultBackend()
	}
	if s, ok := t.str("sha256"); ok && s != "" {
		if sum, err := ParseDigest(s); err != nil {
			ck.errorf(t.key("sha256"), "%v", err)
		} else {
			d.SHA256 = sum
		}
	}
	if n, ok := t.integer("index", 0, 1023); ok {
		d.Index = n
	}
	if _, present := t.m["selector"]; present {
		sel := &Selector{}
		st := t.sub("selector")
		if m, ok := st.str("model"); ok {
			if strings.TrimSpace(m) == "" {
				ck.errorf(st.key("model"), "empty model")
			}
			sel.Model = m
		}
		if sz, ok := st.size("min_memory"); ok {
			if sz.IsPercent() {
				ck.errorf(st.key("min_memory"), "want an absolute size such as \"80GiB\", not a percentage")
			} else {
				sel.MinMemory = sz.Bytes
			}
		}
		if len(st.m) == 0 {
			ck.errorf(st.at, "empty selector: set model, min_memory or both")
		}
		st.finish()
		if d.Index >= 0 {
			ck.errorf(st.at, "set together with index; a device is chosen by one or the other")
		}
		d.Selector = sel
	}
	if n, ok := t.integer("in_flight", 1, 64); ok {
		d.InFlight = n
	}
	if _, present := t.m["options"]; present {
		ot := t.sub("options")
		d.Options = map[string]string{}
		for _, k := range ot.sortedKeys() {
			if !optionName.MatchString(k) {
				ck.errorf(ot.key(k), "not a flag name: the backend gets -%s=VALUE on its command line, so use letters, digits, '-' and '_' (environment variables go in [device.env])", k)
				continue
			}
			if v, ok := ot.str(k); ok {
				d.Options[k] = v
			}
		}
		ot.finish()
	}
	if _, present := t.m["env"]; present {
		et := t.sub("env")
		d.Env = map[string]string{}
		for _, k := range et.sortedKeys() {
			switch {
			case !envName.MatchString(k):
				ck.errorf(et.key(k), "not an environment variable name (letters, digits and '_', not starting with a digit)")
				continue
			case strings.HasPrefix(k, "ZKHOST_") || strings.HasPrefix(k, "PLUGIN_"):
				ck.errorf(et.key(k), "reserved: zkhost and go-plugin set the ZKHOST_ and PLUGIN_ variables of a backend themselves (use the device's own keys: index, in_flight, [device.options])")
				continue
			}
			if v, ok := et.str(k); ok {
				d.Env[k] = v
			}
		}
		et.finish()
	}
	t.finish()
	return d
}

// optionName is what a [device.options] key may be: a flag name.
var optionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// envName is what a [device.env] key may be: a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// uniqueDevices refuses two devices that would run the same backend on the
// same device index: the two processes would fight over one GPU.
func (ck *checker) uniqueDevices(ds []Device) {
	type slot struct {
		backend string
		index   int
	}
	seen := map[slot]int{}
	for i, d := range ds {
		if d.Index < 0 {
			continue
		}
		s := slot{d.Backend, d.Index}
		if j, dup := seen[s]; dup {
			ck.errorf(joinKey(elem("device", i), "index"), "device %d with this backend is already device[%d]", d.Index, j)
			continue
		}
		seen[s] = i
	}
}

func (ck *checker) retry(t *table) Retry {
	r := Retry{MaxAttempts: 3, BackoffBase: time.Second, BackoffMax: time.Minute}
	if n, ok := t.integer("max_attempts", 1, 100); ok {
		r.MaxAttempts = n
	}
	if d, ok := t.duration("backoff_base", span{10 * time.Millisecond, 10 * time.Minute, ""}); ok {
		r.BackoffBase = d
	}
	if d, ok := t.duration("backoff_max", span{10 * time.Millisecond, time.Hour, ""}); ok {
		r.BackoffMax = d
	}
	if d, ok := t.duration("prove_timeout", span{time.Second, 24 * time.Hour, "derives it from the partition's size"}); ok {
		r.ProveTimeout = d
	}
	if r.BackoffMax < r.BackoffBase {
		key := "backoff_max"
		if _, ok := t.m[key]; !ok {
			key = "backoff_base"
		}
		ck.errorf(t.key(key), "backoff_max (%s) is below backoff_base (%s)", r.BackoffMax, r.BackoffBase)
	}
	t.finish()
	return r
}

// table reads one TOML table, remembering which keys were asked for so that
// finish can report the rest as unknown.
type table struct {
	ck    *checker
	at    string // the table's own path
	m     map[string]any
	known map[string]bool
}

func (ck *checker) table(path string, m map[string]any) *table {
	if m == nil {
		m = map[string]any{}
	}
	return &table{ck: ck, at: path, m: m, known: map[string]bool{}}
}

// key returns the path of key k in t.
func (t *table) key(k string) string { return joinKey(t.at, k) }

func (t *table) lookup(k string) (any, bool) {
	t.known[k] = true
	t.ck.asked[arrayIndex.ReplaceAllString(t.key(k), "")] = true
	v, ok := t.m[k]
	return v, ok
}

func (t *table) sortedKeys() []string { return slices.Sorted(maps.Keys(t.m)) }

// finish reports every key of t that nothing asked for.
func (t *table) finish() {
	for _, k := range t.sortedKeys() {
		if t.known[k] {
			continue
		}
		what := "unknown key"
		switch t.m[k].(type) {
		case map[string]any:
			what = "unknown table"
		case []map[string]any:
			what = "unknown array of tables"
		}
		if s := t.suggest(k); s != "" {
			t.ck.errorf(t.key(k), "%s (did you mean %q?)", what, s)
		} else {
			t.ck.errorf(t.key(k), "%s", what)
		}
	}
}

// suggest returns a known key close to k (a typo or wrong case), or "".
func (t *table) suggest(k string) string {
	best, bestDist := "", -1
	for cand := range t.known {
		d := editDistance(strings.ToLower(k), strings.ToLower(cand))
		if d > max(2, len(cand)/3) {
			continue
		}
		if bestDist < 0 || d < bestDist || d == bestDist && cand < best {
			best, bestDist = cand, d
		}
	}
	return best
}

func (t *table) str(k string) (string, bool) {
	v, ok := t.lookup(k)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		t.ck.errorf(t.key(k), "want a string, got %s", describe(v))
		return "", false
	}
	return s, true
}

func (t *table) boolean(k string) (bool, bool) {
	v, ok := t.lookup(k)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		t.ck.errorf(t.key(k), "want true or false, got %s", describe(v))
		return false, false
	}
	return b, true
}

// integer reads an integer in least..most.
func (t *table) integer(k string, least, most int) (int, bool) {
	v, ok := t.lookup(k)
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok {
		t.ck.errorf(t.key(k), "want an integer, got %s", describe(v))
		return 0, false
	}
	if n < int64(least) {
		t.ck.errorf(t.key(k), "%d is below the least allowed, %d", n, least)
		return 0, false
	}
	if n > int64(most) {
		t.ck.errorf(t.key(k), "%d is above the most allowed, %d", n, most)
		return 0, false
	}
	return int(n), true
}

// span is the range a duration setting may take: least to most, and zero
// besides when zero names what "0s" means for the key ("" refuses it). A
// timeout of "1ns" or a window of years is a slip, not a wish.
type span struct {
	least, most time.Duration
	zero        string
}

// duration reads a Go duration string ("30m", "1h30m") within sp; negative
// ones are refused.
func (t *table) duration(k string, sp span) (time.Duration, bool) {
	s, ok := t.str(k)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	zero := ""
	if sp.zero != "" {
		zero = fmt.Sprintf(" (\"0s\" %s)", sp.zero)
	}
	switch {
	case err != nil:
		t.ck.errorf(t.key(k), "bad duration %q: want a number with a unit, like \"30m\" or \"1h30m\"", s)
	case d < 0:
		t.ck.errorf(t.key(k), "negative duration %q", s)
	case d == 0 && sp.zero == "":
		t.ck.errorf(t.key(k), "duration must be above zero")
	case d == 0:
		return 0, true
	case d < sp.least:
		t.ck.errorf(t.key(k), "%s is below the least allowed, %s%s", s, shortDuration(sp.least), zero)
	case d > sp.most:
		t.ck.errorf(t.key(k), "%s is above the most allowed, %s%s", s, shortDuration(sp.most), zero)
	default:
		return d, true
	}
	return 0, false
}

// shortDuration writes d as a config would: "1m", "24h", "10ms", not "1m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// size reads a size string (see ParseSize) or a plain integer of bytes.
func (t *table) size(k string) (Size, bool) {
	v, ok := t.lookup(k)
	if !ok {
		return Size{}, false
	}
	switch v := v.(type) {
	case int64:
		if v < 0 {
			t.ck.errorf(t.key(k), "negative size %d", v)
			return Size{}, false
		}
		return Size{Bytes: uint64(v)}, true
	case string:
		s, err := ParseSize(v)
		if err != nil {
			t.ck.errorf(t.key(k), "%v", err)
			return Size{}, false
		}
		return s, true
	}
	t.ck.errorf(t.key(k), "want a size like \"64GiB\" or \"80%%\", got %s", describe(v))
	return Size{}, false
}

// path reads a file path: "~/" is the home directory, and a relative path is
// taken from the config file's directory. An empty path is an error: these
// keys have defaults, which leaving the key out selects.
func (t *table) path(k string) (string, bool) {
	s, ok := t.str(k)
	if !ok {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		t.ck.errorf(t.key(k), "empty path (leave the key out for the default)")
		return "", false
	}
	return t.absPath(k, s)
}

// optPath reads an optional file path, like path; "" means unset.
func (t *table) optPath(k string) (string, bool) {
	s, ok := t.str(k)
	if !ok || s == "" {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		t.ck.errorf(t.key(k), "blank path")
		return "", false
	}
	return t.absPath(k, s)
}

func (t *table) absPath(k, s string) (string, bool) {
	if s == "~" || strings.HasPrefix(s, "~/") {
		home, err := t.ck.env.homeDir()
		if err != nil || home == "" {
			t.ck.errorf(t.key(k), "cannot expand ~: home directory unknown")
			return "", false
		}
		s = filepath.Join(home, s[1:])
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(t.ck.base, s)
	}
	return filepath.Clean(s), true
}

// sub returns the table under k, empty when k is absent (so defaults apply).
func (t *table) sub(k string) *table {
	v, ok := t.lookup(k)
	if !ok {
		return t.ck.table(t.key(k), nil)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.ck.errorf(t.key(k), "want a table, got %s", describe(v))
		return t.ck.table(t.key(k), nil)
	}
	return t.ck.table(t.key(k), m)
}

// list returns the tables of the array of tables under k ([[k]] sections, or
// k = [{...}, ...]).
func (t *table) list(k string) []*table {
	v, ok := t.lookup(k)
	if !ok {
		return nil
	}
	var out []*table
	switch v := v.(type) {
	case []map[string]any:
		for i, m := range v {
			out = append(out, t.ck.table(elem(t.key(k), i), m))
		}
	case []any:
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				t.ck.errorf(elem(t.key(k), i), "want a table, got %s", describe(e))
				continue
			}
			out = append(out, t.ck.table(elem(t.key(k), i), m))
		}
	default:
		t.ck.errorf(t.key(k), "want [[%s]] tables, got %s", k, describe(v))
	}
	return out
}

var arrayIndex = regexp.MustCompile(`\[[0-9]+\]`)

// describe names a decoded TOML value's type, with the value when short.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case float64:
		return fmt.Sprintf("the float %v", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case map[string]any:
		return "a table"
	case []map[string]any, []any:
		return "an array"
	case time.Time:
		return "a date or time"
	}
	return fmt.Sprintf("a %T", v)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
