package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// TestBadConfigs checks that each bad config is refused with a problem naming
// the key and the line it is on.
func TestBadConfigs(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		key        string // the key the problem names
		line       int    // its line
		msg        string // a fragment of the message
	}{
		{"unknown top-level key", "log_lvl = \"info\"\n", "log_lvl", 1, `did you mean "log_level"`},
		{"unknown key in table", "[api]\nsocket = \"/s\"\nsockt_mode = \"0600\"\n", "api.sockt_mode", 3, `did you mean "socket_mode"`},
		{"unknown table", "\n[bogus]\nx = 1\n", "bogus", 2, "unknown table"},
		{"unknown key in second device", "[[device]]\nindex = 0\n[[device]]\nindex = 1\ncolour = \"red\"\n", "device[1].colour", 5, "unknown key"},
		{"unknown selector key", "[[device]]\nselector = { model = \"H100\", min_mem = \"8GiB\" }\n", "device[0].selector.min_mem", 2, `did you mean "min_memory"`},
		{"wrong type", "log_json = \"yes\"\n", "log_json", 1, "want true or false"},
		{"string for integer", "[synthesis]\nworkers = \"4\"\n", "synthesis.workers", 2, "want an integer"},
		{"negative workers", "[synthesis]\n\nworkers = -2\n", "synthesis.workers", 3, "below the least allowed"},
		{"negative threads", "[synthesis]\nthreads = -1\n", "synthesis.threads", 2, "below the least allowed"},
		{"zero cores", "[synthesis]\ncores = 0\n", "synthesis.cores", 2, "below the least allowed"},
		{"threads past cores", "[synthesis]\ncores = 12\nworkers = 4\nthreads = 4\n", "synthesis.threads", 4, "workers (4) × threads (4) = 16 solver threads, more than synthesis.cores (12)"},
		{"workers past cores", "[synthesis]\nworkers = 13\n", "synthesis.workers", 2, "more than synthesis.cores (12)"},
		{"cores below workers", "[synthesis]\ncores = 2\nworkers = 4\n", "synthesis.workers", 3, "workers (4) × threads (1) = 4 solver threads, more than synthesis.cores (2)"},
		{"timeline size percentage", "[timeline]\nmax_size = \"10%\"\n", "timeline.max_size", 2, "percentage makes no sense"},
		{"timeline size tiny", "[timeline]\nmax_size = \"1KiB\"\n", "timeline.max_size", 2, "below the least allowed, 64KiB"},
		{"timeline keep negative", "[timeline]\nkeep = -1\n", "timeline.keep", 2, "below the least allowed"},
		{"timeline enabled not bool", "[timeline]\nenabled = \"no\"\n", "timeline.enabled", 2, "want true or false"},
		{"bad log level", "log_level = \"loud\"\n", "log_level", 1, "unknown level"},
		{"bad duration", "[keys]\nidle_eviction = \"30 minutes\"\n", "keys.idle_eviction", 2, "bad duration"},
		{"negative duration", "[journal]\nretention = \"-1h\"\n", "journal.retention", 2, "negative duration"},
		{"client named admin", "[api]\ntcp_address = \"127.0.0.1:1\"\ntls_cert = \"/c\"\ntls_key = \"/k\"\ntoken_file = \"/t\"\n[[client]]\nname = \"admin\"\ntoken_file = \"/a\"\n", "client[0].name", 7, "reserved"},
		{"negative queue limit", "[limits]\nqueued_partitions = -1\n", "limits.queued_partitions", 2, "below the least allowed"},
		{"empty device list", "device = []\n", "device", 1, "empty list"},
		{"journal reserve as a share", "[journal]\nreserve = \"5%\"\n", "journal.reserve", 2, "absolute size"},
		{"zero crash window", "[health]\ncrash_window = \"0s\"\n", "health.crash_window", 2, "above zero"},
		{"backoff max below base", "[retry]\nbackoff_base = \"10s\"\nbackoff_max = \"1s\"\n", "retry.backoff_max", 3, "below backoff_base"},
		{"bad size unit", "[budget]\nbytes = \"64GB2\"\n", "budget.bytes", 2, "unknown unit"},
		{"negative size", "[budget]\nbytes = -5\n", "budget.bytes", 2, "negative size"},
		{"percentage over 100", "[budget]\nbytes = \"150%\"\n", "budget.bytes", 2, "outside"},
		{"budget over RAM", "[budget]\nbytes = \"1TiB\"\n", "budget.bytes", 2, "more than this machine's RAM"},
		{"reserve not below budget", "[budget]\nbytes = \"8GiB\"\ncritical_reserve = \"8GiB\"\n", "budget.critical_reserve", 3, "not below budget.bytes"},
		{"unknown class", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nclass = \"urgent\"\n", "circuit[0].class", 4, "unknown priority class"},
		{"class and priority", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nclass = \"low\"\npriority = \"high\"\n", "circuit[0].priority", 5, "another name"},
		{"cluster max_payload tiny", "[cluster]\nembedded = true\nstore_dir = \"/s\"\nmax_payload = \"1KiB\"\n", "cluster.max_payload", 4, "want 4KiB to 64MiB"},
		{"cluster inline_max past max_payload", "[cluster]\nembedded = true\nstore_dir = \"/s\"\nmax_payload = \"4KiB\"\ninline_max = \"4KiB\"\n", "cluster.inline_max", 5, "want at most 3KiB"},
		{"cluster url with a credential", "[cluster]\nurls = [\"nats://zk:s3cret@127.0.0.1:4222\"]\n", "cluster.urls", 2, "nats://REDACTED@127.0.0.1:4222 carries a credential"},
		{"cluster two kinds of credentials", "[cluster]\nurls = [\"nats://127.0.0.1:4222\"]\ntoken_file = \"/t\"\ncreds_file = \"/c\"\n", "cluster.creds_file", 4, "not cluster.token_file and cluster.creds_file"},
		{"cluster creds_file embedded", "[cluster]\nembedded = true\nstore_dir = \"/s\"\ncreds_file = \"/c\"\n", "cluster.creds_file", 4, "operator mode"},
		{"cluster bad prefix", "[cluster]\nembedded = true\nstore_dir = \"/s\"\nprefix = \"a.b\"\n", "cluster.prefix", 4, "bad prefix"},
		{"cluster inline_max percentage", "[cluster]\nembedded = true\nstore_dir = \"/s\"\ninline_max = \"5%\"\n", "cluster.inline_max", 4, "not a percentage"},
		{"cluster unknown role", "[cluster]\nembedded = true\nstore_dir = \"/s\"\nrole = \"solve\"\n", "cluster.role", 4, `unknown role "solve"`},
		{"cluster synthesis host with a device", "[[device]]\nindex = 0\n[cluster]\nembedded = true\nstore_dir = \"/s\"\nrole = \"synthesize\"\n", "device", 1, "runs no backend"},
		{"cluster ready_max zero", "[cluster]\nembedded = true\nstore_dir = \"/s\"\nready_max = 0\n", "cluster.ready_max", 4, "below the least allowed"},
		{"circuit without name", "[[circuit]]\nkeys = \"/k\"\n", "circuit[0]", 1, "missing name"},
		{"circuit without keys", "[[circuit]]\nname = \"m\"\nccs = \"/c\"\n", "circuit[0]", 1, "missing keys (a key directory), or else pk, vk"},
		{"bad circuit name", "[[circuit]]\nname = \"my circuit\"\nkeys = \"/k\"\n", "circuit[0].name", 2, "letters, digits"},
		{"duplicate circuit", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\n[[circuit]]\nname = \"m\"\nkeys = \"/j\"\n", "circuit[1].name", 5, "already the name of circuit[0]"},
		{"short synthesizer sha256", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nsynthesizer = \"/s\"\nsynthesizer_sha256 = \"abcd\"\n", "circuit[0].synthesizer_sha256", 5, "64 hex digits"},
		{"synthesizer sha256 without synthesizer", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nsynthesizer_sha256 = \"" + strings.Repeat("ab", 32) + "\"\n", "circuit[0].synthesizer_sha256", 4, "without synthesizer"},
		{"synthesizer timeout without synthesizer", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nsynthesizer_timeout = \"1m\"\n", "circuit[0].synthesizer_timeout", 4, "without synthesizer"},
		{"zero synthesizer timeout", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nsynthesizer = \"/s\"\nsynthesizer_timeout = \"0s\"\n", "circuit[0].synthesizer_timeout", 5, "above zero"},
		{"misspelt synthesizer", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nsynthesiser = \"/s\"\n", "circuit[0].synthesiser", 4, `did you mean "synthesizer"`},
		{"blank synthesizer", "[[circuit]]\nname = \"m\"\nkeys = \"/k\"\nsynthesizer = \" \"\n", "circuit[0].synthesizer", 4, "blank path"},
		{"short sha256", "[[device]]\nsha256 = \"abcd\"\n", "device[0].sha256", 2, "64 hex digits"},
		{"non-hex sha256", "[[device]]\nsha256 = \"" + strings.Repeat("zz", 32) + "\"\n", "device[0].sha256", 2, "64 hex digits"},
		{"negative index", "[[device]]\nindex = -1\n", "device[0].index", 2, "below the least allowed"},
		{"index and selector", "[[device]]\nindex = 0\n[device.selector]\nmodel = \"H100\"\n", "device[0].selector", 3, "together with index"},
		{"empty selector", "[[device]]\nselector = {}\n", "device[0].selector", 2, "empty selector"},
		{"percentage min_memory", "[[device]]\nselector = { min_memory = \"50%\" }\n", "device[0].selector.min_memory", 2, "absolute size"},
		{"zero in_flight", "[[device]]\nin_flight = 0\n", "device[0].in_flight", 2, "below the least allowed"},
		{"non-string option", "[[device]]\n[device.options]\nthreads = 8\n", "device[0].options.threads", 3, "want a string"},
		{"duplicate device", "[[device]]\nbackend = \"/b\"\nindex = 1\n\n[[device]]\nbackend = \"/b\"\nindex = 1\n", "device[1].index", 7, "already device[0]"},
		{"device as table", "[device]\nindex = 0\n", "device", 1, "want [[device]] tables"},
		{"tcp without tls", "[api]\ntcp_address = \"0.0.0.0:7443\"\ntoken_file = \"/t\"\n", "api.tcp_address", 2, "set api.tls_cert, api.tls_key"},
		{"tls without tcp", "[api]\ntls_cert = \"/c\"\n", "api.tls_cert", 2, "without api.tcp_address"},
		{"bad tcp address", "[api]\ntcp_address = \"localhost\"\n", "api.tcp_address", 2, "want host:port"},
		{"bad web port", "[api]\nweb_address = \":http\"\n", "api.web_address", 2, "port must be a number"},
		{"web off loopback without TLS", "[api]\nweb_address = \"0.0.0.0:7080\"\n", "api.web_address", 2, "not a loopback address"},
		{"integer socket mode", "[api]\nsocket_mode = 600\n", "api.socket_mode", 2, "octal string"},
		{"bad socket mode", "[api]\nsocket_mode = \"0999\"\n", "api.socket_mode", 2, "bad mode"},
		{"socket mode locks out owner", "[api]\nsocket_mode = \"0066\"\n", "api.socket_mode", 2, "without read and write"},
		{"socket path too long", "[api]\nsocket = \"/" + strings.Repeat("s", 120) + "\"\n", "api.socket", 2, "longer than a unix socket path"},
		{"empty path", "[journal]\npath = \"\"\n", "journal.path", 2, "empty path"},
		{"table where a value goes", "[api]\nsocket = { path = \"/s\" }\n", "api.socket", 2, "want a string, got a table"},
		{"value where a table goes", "api = \"/s\"\n", "api", 1, "want a table"},
		{"syntax error", "[api]\nsocket = \"/s\n", "api.socket", 2, "invalid TOML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.text), "zk.toml", testEnv())
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a *config.Error", err)
			}
			var found *Problem
			for i, p := range ce.Problems {
				if p.Key == tc.key && strings.Contains(p.Message, tc.msg) {
					found = &ce.Problems[i]
				}
			}
			if found == nil {
				t.Fatalf("no problem names %q and says %q; got:\n%v", tc.key, tc.msg, err)
			}
			if found.Line != tc.line {
				t.Errorf("line %d, want %d: %v", found.Line, tc.line, found)
			}
			// The error text carries file, line and key together.
			if want := fmt.Sprintf("zk.toml:%d: %s: ", tc.line, tc.key); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		})
	}
}

func TestAllProblemsAtOnce(t *testing.T) {
	const text = `log_level = "loud"
[api]
socket_mode = 600
[[circuit]]
name = "m"
[[device]]
sha256 = "x"
[keys]
idle_eviction = "soon"
`
	_, err := parse([]byte(text), "zk.toml", testEnv())
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v", err)
	}
	var got []string
	for _, p := range ce.Problems {
		got = append(got, fmt.Sprintf("%d %s", p.Line, p.Key))
	}
	want := []string{"1 log_level", "3 api.socket_mode", "4 circuit[0]", "7 device[0].sha256", "9 keys.idle_eviction"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("problems %v, want %v", got, want)
	}
	if !strings.HasPrefix(err.Error(), "config: 5 problems:\n  zk.toml:1: log_level: ") {
		t.Errorf("error text:\n%s", err)
	}
}

func TestSyntaxErrorKeepsPosition(t *testing.T) {
	_, err := parse([]byte("a = 1\nb = = 2\n"), "zk.toml", testEnv())
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v; want it to unwrap to toml.ParseError", err)
	}
	if pe.Position.Line != 2 || !strings.Contains(pe.ErrorWithPosition(), "b = = 2") {
		t.Errorf("position %+v:\n%s", pe.Position, pe.ErrorWithPosition())
	}
	if !strings.HasPrefix(err.Error(), "config: zk.toml:2: ") {
		t.Errorf("error = %q", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("/nonexistent/zkhost.toml")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/zkhost.toml") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Source: "a.toml", Line: 3, Key: "api.socket", Message: "bad"}, "a.toml:3: api.socket: bad"},
		{Problem{Source: "a.toml", Key: "budget.bytes", Message: "bad"}, "a.toml: budget.bytes: bad"},
		{Problem{Line: 2, Message: "bad"}, "2: bad"},
		{Problem{Message: "bad"}, "bad"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v = %q, want %q", tc.p, got, tc.want)
		}
	}
}
