package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/client"
	"github.com/zkhost/zkhost/host/config"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

var writeBadInputsDoc = flag.Bool("e2e.write-bad-inputs-doc", false, "rewrite docs/bad-inputs.md from TestBadInputs' tables")

// badInputsDoc is the document that lists every case of TestBadInputs.
const badInputsDoc = "../docs/bad-inputs.md"

// badCase is one bad input and what the host must answer.
type badCase struct {
	name string
	// what the host must answer, for the document ("InvalidArgument: ...").
	expect string
	run    func(t *testing.T) error
}

// badGroup is a group of cases run while a normal job runs on the shared daemon.
type badGroup struct {
	name  string
	doc   string
	cases []badCase
}

// TestBadInputs feeds the host bad input of every kind: config files, API
// requests, witnesses, key files and backends. Each case expects a specific gRPC
// code or error text, and each group runs while a normal job runs on a shared
// daemon, which must complete with valid proofs. docs/bad-inputs.md lists every
// case (rewrite it with -e2e.write-bad-inputs-doc).
func TestBadInputs(t *testing.T) {
	env := newBadEnv(t)
	groups := []badGroup{
		{"config", "config.Parse on a zkhost.toml; the error must name the key and say what is wrong.", env.configCases()},
		{"api", "Requests to a running daemon over its unix socket (raw gRPC, so the server's own checks answer) and over TCP with TLS.", env.apiCases()},
		{"witness", "Witnesses and wire assignments submitted to a running daemon.", env.witnessCases()},
		{"keys", "Key files: `zkhost serve` must refuse to start on a damaged key set; a key replaced under a running daemon fails its job.", env.keyCases()},
		{"plugins", "Backends that cannot serve: `zkhost serve` must refuse to start, naming the backend and the cause.", env.pluginCases()},
	}
	if *writeBadInputsDoc {
		writeDoc(t, groups)
	}
	doc, err := os.ReadFile(badInputsDoc)
	if err != nil {
		t.Fatalf("%v (write it with -e2e.write-bad-inputs-doc)", err)
	}
	total := 0
	for _, g := range groups {
		for _, c := range g.cases {
			total++
			if !bytes.Contains(doc, []byte("| "+g.name+" | "+c.name+" |")) {
				t.Errorf("%s does not list case %s/%s (rewrite it with -e2e.write-bad-inputs-doc)", badInputsDoc, g.name, c.name)
			}
		}
	}
	if total < 50 {
		t.Errorf("%d bad-input cases, want at least 50", total)
	}
	for gi, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			// A normal job runs on the shared daemon while the group's cases do.
			seed := uint64(1000 + gi)
			normal := env.main.submit("merkle", seed, 3, api.ClassNormal)
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					if err := c.run(t); err != nil {
						t.Error(err)
					}
				})
			}
			done, _ := env.main.await(normal.ID, 2*time.Minute)
			checkDone(t, done, "merkle", seed, 3)
		})
	}
	if !env.main.running() {
		t.Fatalf("the shared daemon died during the bad inputs")
	}
}

// badEnv is what the cases share: a daemon serving chain, merkle and a private copy
// of chain's keys (for the key swap), with a TCP listener.
type badEnv struct {
	t         *testing.T
	main      *host
	swapDir   string // the daemon's "chainswap" keys
	otherKeys string // another setup of chain-k8
	tcpAddr   string
	certFile  string
	token     string
}

func newBadEnv(t *testing.T) *badEnv {
	env := &badEnv{t: t}
	dir := t.TempDir()
	// chainswap is chain's key set under its own name (so its key id is its
	// own, and no backend has it loaded through another circuit).
	env.swapDir = filepath.Join(dir, "swap")
	if err := os.MkdirAll(env.swapDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range keySetFiles(t, keyDir, fixtures["chain"].spec.ID())[:3] {
		ext := filepath.Ext(f)
		copyFile(t, f, filepath.Join(env.swapDir, "chainswap"+ext), 0o644)
	}
	env.otherKeys = filepath.Join(dir, "other")
	if err := circuit.Keygen(fixtures["chain"].spec, env.otherKeys); err != nil {
		t.Fatal(err)
	}
	env.tcpAddr = apitest.FreeAddr(t)
	certFile, keyFile := apitest.WriteTLSFiles(t, dir)
	env.certFile = certFile
	env.token = "e2e-token-" + hex.EncodeToString(randomBytes(t, 16))
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(env.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	circuits := fmt.Sprintf("[[circuit]]\nname = \"chain\"\nkeys = %q\n\n[[circuit]]\nname = \"merkle\"\nkeys = %q\n\n[[circuit]]\nname = \"chainswap\"\nkeys = %q\n\n",
		keyDir, keyDir, env.swapDir)
	api := fmt.Sprintf("tcp_address = %q\ntls_cert = %q\ntls_key = %q\ntoken_file = %q", env.tcpAddr, env.certFile, keyFile, tokenFile)
	// The key cases check what a backend finds when it loads a key on demand
	// (a key preloaded at start is checked before any case changes its file).
	env.main = newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: circuits, API: api, NoPreload: true})
	env.main.start()
	return env
}

// ---- config ----

func (env *badEnv) configCases() []badCase {
	type cfg struct{ name, toml, want string }
	longSocket := "/tmp/" + strings.Repeat("s", 120) + ".sock"
	cases := []cfg{
		{"toml syntax error", "log_level = \n", "zkhost.toml:2: log_level: invalid TOML: expected value"},
		{"unknown key with a suggestion", "stat_dir = \"/x\"\n", `unknown key (did you mean "state_dir"?)`},
		{"unknown table", "[gpu]\nmodel = \"x\"\n", "gpu: unknown table"},
		{"unknown log level", "log_level = \"loud\"\n", `unknown level "loud"`},
		{"log_json not a boolean", "log_json = \"yes\"\n", "want true or false"},
		{"socket mode as an integer", "[api]\nsocket_mode = 660\n", `want an octal string like "0660"`},
		{"socket mode without owner rw", "[api]\nsocket_mode = \"0400\"\n", "leaves the daemon's own user without read and write"},
		{"socket path too long", fmt.Sprintf("[api]\nsocket = %q\n", longSocket), "longer than a unix socket path may be"},
		{"web off loopback without tls and token", "[api]\nweb_address = \"0.0.0.0:7080\"\n", "is not a loopback address"},
		{"tcp without tls and token", "[api]\ntcp_address = \"127.0.0.1:7443\"\n", "TCP needs TLS and a bearer token: set api.tls_cert, api.tls_key, api.token_file"},
		{"tls cert without tcp", "[api]\ntls_cert = \"/c.pem\"\n", "set without api.tcp_address"},
		{"tcp address without port", "[api]\ntcp_address = \"localhost\"\ntls_cert = \"/c\"\ntls_key = \"/k\"\ntoken_file = \"/t\"\n", `bad address "localhost": want host:port`},
		{"tcp port out of range", "[api]\ntcp_address = \"127.0.0.1:70000\"\ntls_cert = \"/c\"\ntls_key = \"/k\"\ntoken_file = \"/t\"\n", "port must be a number from 1 to 65535"},
		{"zero budget", "[budget]\nbytes = \"0\"\n", "the budget must be above zero"},
		{"critical reserve not below budget", "[budget]\nbytes = \"1GiB\"\ncritical_reserve = \"100%\"\n", "is not below budget.bytes"},
		{"zero synthesis workers", "[synthesis]\nworkers = 0\n", "synthesis.workers: 0 is below the least allowed, 1"},
		{"circuit without name", "[[circuit]]\nkeys = \"/k\"\n", "missing name"},
		{"circuit name with a space", "[[circuit]]\nname = \"my circuit\"\nkeys = \"/k\"\n", `has ' ': use letters, digits`},
		{"duplicate circuit name", "[[circuit]]\nname = \"a\"\nkeys = \"/k\"\n[[circuit]]\nname = \"a\"\nkeys = \"/k2\"\n", `"a" is already the name of circuit[0]`},
		{"circuit without keys", "[[circuit]]\nname = \"a\"\npk = \"/a.pk\"\n", "missing keys (a key directory), or else ccs, vk"},
		{"unknown circuit class", "[[circuit]]\nname = \"a\"\nkeys = \"/k\"\nclass = \"urgent\"\n", `unknown priority class "urgent"`},
		{"class and priority together", "[[circuit]]\nname = \"a\"\nkeys = \"/k\"\nclass = \"high\"\npriority = \"low\"\n", "set together with class"},
		{"device sha256 not hex", "[[device]]\nsha256 = \"abc\"\n", `want 64 hex digits (a SHA-256), got "abc"`},
		{"device index and selector", "[[device]]\nindex = 0\nselector = { model = \"H100\" }\n", "set together with index"},
		{"empty selector", "[[device]]\nselector = {}\n", "empty selector"},
		{"selector memory as a percentage", "[[device]]\nselector = { min_memory = \"50%\" }\n", "not a percentage"},
		{"two devices on one index", "[[device]]\nbackend = \"/b\"\nindex = 0\n[[device]]\nbackend = \"/b\"\nindex = 0\n", "is already device[0]"},
		{"zero in_flight", "[[device]]\nin_flight = 0\n", "device[0].in_flight: 0 is below the least allowed, 1"},
		{"backoff_max below backoff_base", "[retry]\nbackoff_base = \"10s\"\nbackoff_max = \"1s\"\n", "backoff_max (1s) is below backoff_base (10s)"},
		{"negative prove_timeout", "[retry]\nprove_timeout = \"-1s\"\n", `negative duration "-1s"`},
		{"zero max_attempts", "[retry]\nmax_attempts = 0\n", "retry.max_attempts: 0 is below the least allowed, 1"},
		{"zero crash_limit", "[health]\ncrash_limit = 0\n", "health.crash_limit: 0 is below the least allowed, 1"},
		{"crash_window not a duration", "[health]\ncrash_window = \"soon\"\n", `bad duration "soon"`},
		{"retention as an integer", "[journal]\nretention = 5\n", "want a string"},
		{"journal reserve as a share", "[journal]\nreserve = \"10%\"\n", "journal.reserve: want an absolute size"},
		{"empty device list", "device = []\n", "device: an empty list: configure at least one [[device]]"},
		{"cluster without a NATS server", "[cluster]\n", "no NATS server: set cluster.urls"},
		{"cluster url off loopback without tls and credentials", "[cluster]\nurls = [\"nats://10.0.0.2:4222\"]\n", "NATS off this machine needs TLS and credentials; set cluster.tls_ca, credentials"},
		{"embedded cluster listening off loopback without tls", "[cluster]\nembedded = true\nlisten = \"0.0.0.0:4222\"\nuser = \"zk\"\npassword_file = \"/p\"\n", "set cluster.tls_cert and cluster.tls_key"},
		{"cluster routes off loopback without a CA", "[cluster]\nembedded = true\ncluster_listen = \"10.0.0.1:6222\"\nroutes = [\"nats-route://10.0.0.2:6222\"]\ntls_cert = \"/c\"\ntls_key = \"/k\"\nuser = \"zk\"\npassword_file = \"/p\"\n", "routes verify each other's certificates"},
		{"cluster user without password", "[cluster]\nembedded = true\nuser = \"zk\"\n", "cluster.user and cluster.password_file go together"},
		{"cluster url with another scheme", "[cluster]\nurls = [\"http://127.0.0.1:4222\"]\n", "the scheme must be one of nats, tls"},
		{"cluster max_payload below 4 KiB", "[cluster]\nembedded = true\nmax_payload = \"1KiB\"\n", "want 4KiB to 64MiB"},
		{"cluster inline_max not below max_payload", "[cluster]\nembedded = true\nmax_payload = \"4KiB\"\ninline_max = \"4KiB\"\n", "want at most 3KiB"},
	}
	out := make([]badCase, len(cases))
	for i, c := range cases {
		out[i] = env.configCase(c.name, c.toml, c.want)
	}
	want := "is a shared directory that other users may write in"
	out = append(out, badCase{name: "state directory of mode 1777", expect: "`zkhost serve` refuses: `" + want + "`", run: func(t *testing.T) error {
		dir := t.TempDir()
		state := filepath.Join(dir, "state")
		if err := os.Mkdir(state, 0o700); err != nil {
			return err
		}
		if err := os.Chmod(state, 0o777|os.ModeSticky); err != nil {
			return err
		}
		return serveFailsIn(dir, hostConf{Devices: []deviceConf{cpuDevice()}}, want)
	}})
	return out
}

// configCase is a config case expecting text in the error.
func (env *badEnv) configCase(name, toml, want string) badCase {
	return badCase{name: name, expect: "error containing `" + want + "`", run: func(t *testing.T) error {
		dir := t.TempDir()
		text := fmt.Sprintf("state_dir = %q\n", filepath.Join(dir, "state")) + toml
		_, err := config.Parse([]byte(text), filepath.Join(dir, "zkhost.toml"))
		if err == nil {
			return fmt.Errorf("config accepted:\n%s", text)
		}
		if !strings.Contains(err.Error(), want) {
			return fmt.Errorf("error %q does not contain %q", err, want)
		}
		return nil
	}}
}

// ---- api ----

// wantCode checks a call's error: gRPC code and a piece of its message.
func wantCode(err error, code codes.Code, text string) error {
	if err == nil {
		return fmt.Errorf("call succeeded, want %s", code)
	}
	st, _ := status.FromError(err)
	if st.Code() != code {
		return fmt.Errorf("code %s (%q), want %s", st.Code(), st.Message(), code)
	}
	if !strings.Contains(st.Message(), text) {
		return fmt.Errorf("message %q does not contain %q", st.Message(), text)
	}
	return nil
}

func (env *badEnv) apiCase(name string, code codes.Code, text string, call func(ctx context.Context, c zkhostv1.ZkhostClient) error) badCase {
	return badCase{name: name, expect: fmt.Sprintf("%s, message containing `%s`", code, text), run: func(t *testing.T) error {
		return wantCode(call(ctxFor(t, 30*time.Second), env.main.raw), code, text)
	}}
}

// streamHeader opens a SubmitStream and sends only its header: a refusal must
// come back to the header alone, before any byte.
func streamHeader(h *zkhostv1.SubmitHeader) func(ctx context.Context, c zkhostv1.ZkhostClient) error {
	return func(ctx context.Context, c zkhostv1.ZkhostClient) error {
		stream, err := c.SubmitStream(ctx)
		if err != nil {
			return err
		}
		if err := stream.Send(&zkhostv1.SubmitStreamRequest{Header: h}); err != nil {
			return err
		}
		r, err := stream.Recv()
		if err == nil {
			return fmt.Errorf("the header was answered %v, not refused", r)
		}
		return err
	}
}

func (env *badEnv) apiCases() []badCase {
	chainW := witnesses(env.t, "chain", 5, 1)
	submit := func(req *zkhostv1.SubmitRequest) func(ctx context.Context, c zkhostv1.ZkhostClient) error {
		return func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.Submit(ctx, req)
			return err
		}
	}
	manyWitnesses := make([][]byte, api.MaxPartitions+1)
	for i := range manyWitnesses {
		manyWitnesses[i] = []byte{1}
	}
	cases := []badCase{
		env.apiCase("submit unknown circuit", codes.NotFound, `unknown circuit "nosuch" (this daemon serves: chain, chainswap, merkle)`,
			submit(&zkhostv1.SubmitRequest{Circuit: "nosuch", Witnesses: chainW})),
		env.apiCase("submit circuit name with a slash", codes.NotFound, `unknown circuit "../chain"`,
			submit(&zkhostv1.SubmitRequest{Circuit: "../chain", Witnesses: chainW})),
		env.apiCase("submit circuit name too long", codes.InvalidArgument, "circuit",
			submit(&zkhostv1.SubmitRequest{Circuit: strings.Repeat("c", 300), Witnesses: chainW})),
		env.apiCase("submit without witnesses", codes.InvalidArgument, "no witness: a job needs one witness per partition",
			submit(&zkhostv1.SubmitRequest{Circuit: "chain"})),
		env.apiCase("submit an empty witness", codes.InvalidArgument, "witness 0 is empty",
			submit(&zkhostv1.SubmitRequest{Circuit: "chain", Witnesses: [][]byte{{}}})),
		env.apiCase("submit too many partitions", codes.InvalidArgument, fmt.Sprintf("a job holds at most %d partitions", api.MaxPartitions),
			submit(&zkhostv1.SubmitRequest{Circuit: "chain", Witnesses: manyWitnesses})),
		env.apiCase("submit unknown class", codes.InvalidArgument, "unknown priority class 99",
			submit(&zkhostv1.SubmitRequest{Circuit: "chain", Witnesses: chainW, Class: 99})),
		env.apiCase("submit request id too long", codes.InvalidArgument, "request id is 300 bytes",
			submit(&zkhostv1.SubmitRequest{Circuit: "chain", Witnesses: chainW, RequestId: strings.Repeat("r", 300)})),
		env.apiCase("stream a witness of the wrong size", codes.InvalidArgument, "witness 1 is declared as 1073741824 bytes, circuit chain wants",
			streamHeader(&zkhostv1.SubmitHeader{Circuit: "chain", InputSizes: []uint64{uint64(len(chainW[0])), 1 << 30}})),
		env.apiCase("stream that ends short", codes.InvalidArgument, "the stream ended within witness 0: 10 of its",
			func(ctx context.Context, c zkhostv1.ZkhostClient) error {
				stream, err := c.SubmitStream(ctx)
				if err != nil {
					return err
				}
				h := &zkhostv1.SubmitHeader{Circuit: "chain", InputSizes: []uint64{uint64(len(chainW[0]))}}
				if err := stream.Send(&zkhostv1.SubmitStreamRequest{Header: h}); err != nil {
					return err
				}
				if _, err := stream.Recv(); err != nil {
					return fmt.Errorf("header refused: %w", err)
				}
				if err := stream.Send(&zkhostv1.SubmitStreamRequest{Chunk: chainW[0][:10]}); err != nil {
					return err
				}
				if err := stream.CloseSend(); err != nil {
					return err
				}
				_, err = stream.Recv()
				return err
			}),
		env.apiCase("request id reused with other content", codes.AlreadyExists, `request id "e2e-reused" already names job`,
			func(ctx context.Context, c zkhostv1.ZkhostClient) error {
				if _, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "chain", Witnesses: chainW, RequestId: "e2e-reused"}); err != nil {
					return fmt.Errorf("first submit: %w", err)
				}
				_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "chain", Witnesses: witnesses(env.t, "chain", 6, 1), RequestId: "e2e-reused"})
				return err
			}),
		env.apiCase("get unknown job", codes.NotFound, `no job "0123456789abcdef"`, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.Get(ctx, &zkhostv1.GetRequest{JobId: "0123456789abcdef"})
			return err
		}),
		env.apiCase("get with an empty job id", codes.InvalidArgument, "job id is empty", func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.Get(ctx, &zkhostv1.GetRequest{})
			return err
		}),
		env.apiCase("get with a job id too long", codes.InvalidArgument, "job id is 1000 bytes", func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.Get(ctx, &zkhostv1.GetRequest{JobId: strings.Repeat("j", 1000)})
			return err
		}),
		env.apiCase("cancel unknown job", codes.NotFound, `no job "feedfacefeedface"`, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.Cancel(ctx, &zkhostv1.CancelRequest{JobId: "feedfacefeedface"})
			return err
		}),
		env.apiCase("await unknown job", codes.NotFound, `no job "deadbeefdeadbeef"`, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			s, err := c.Await(ctx, &zkhostv1.AwaitRequest{JobId: "deadbeefdeadbeef"})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}),
		env.apiCase("list with an unknown state", codes.InvalidArgument, "unknown job state 42", func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.List(ctx, &zkhostv1.ListRequest{State: 42})
			return err
		}),
		env.apiCase("list with a limit too large", codes.InvalidArgument, "limit 1000000 is above the maximum", func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.List(ctx, &zkhostv1.ListRequest{Limit: 1000000})
			return err
		}),
		env.apiCase("preload key of unknown circuit", codes.NotFound, `unknown circuit "nosuch"`, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.PreloadKey(ctx, &zkhostv1.KeyRequest{Circuit: "nosuch"})
			return err
		}),
		env.apiCase("preload key on unknown device", codes.NotFound, `no device "gpu7"`, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.PreloadKey(ctx, &zkhostv1.KeyRequest{Circuit: "chain", Device: "gpu7"})
			return err
		}),
		env.apiCase("evict key of unknown circuit", codes.NotFound, `unknown circuit "nosuch"`, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.EvictKey(ctx, &zkhostv1.KeyRequest{Circuit: "nosuch"})
			return err
		}),
		{name: "client refuses an empty job locally", expect: "InvalidArgument from host/client before sending, `no witness`", run: func(t *testing.T) error {
			_, err := env.main.client.Submit(ctxFor(t, 10*time.Second), api.SubmitRequest{Circuit: "chain"})
			if !errors.Is(err, api.ErrInvalidArgument) || !strings.Contains(err.Error(), "no witness") {
				return fmt.Errorf("got %v, want an invalid-argument error saying no witness", err)
			}
			return nil
		}},
		{name: "tcp without a token", expect: "Unauthenticated, `missing or invalid bearer token`; the refusal is logged", run: func(t *testing.T) error {
			conn, err := grpc.NewClient(env.tcpAddr, grpc.WithTransportCredentials(credentials.NewTLS(env.tlsConfig(t))))
			if err != nil {
				return err
			}
			defer conn.Close()
			_, err = zkhostv1.NewZkhostClient(conn).Status(ctxFor(t, 10*time.Second), &zkhostv1.StatusRequest{})
			if err := wantCode(err, codes.Unauthenticated, "missing or invalid bearer token"); err != nil {
				return err
			}
			if !strings.Contains(env.main.logText(), "refused API call") {
				return errors.New("the refusal is not in the daemon's log")
			}
			return nil
		}},
		{name: "tcp with a wrong token", expect: "Unauthenticated through host/client (api.ErrUnauthenticated)", run: func(t *testing.T) error {
			c, err := client.Dial(env.tcpAddr, client.Options{CAFile: env.certFile, Token: "wrong-token-0123456789abcdef"})
			if err != nil {
				return err
			}
			defer c.Close()
			_, err = c.Status(ctxFor(t, 10*time.Second))
			if !errors.Is(err, api.ErrUnauthenticated) {
				return fmt.Errorf("got %v, want an unauthenticated error", err)
			}
			// The right token works on the same listener.
			good, err := client.Dial(env.tcpAddr, client.Options{CAFile: env.certFile, Token: env.token})
			if err != nil {
				return err
			}
			defer good.Close()
			if _, err := good.Status(ctxFor(t, 10*time.Second)); err != nil {
				return fmt.Errorf("with the right token: %v", err)
			}
			return nil
		}},
		{name: "tcp in plain text", expect: "Unavailable: the TCP listener speaks only TLS", run: func(t *testing.T) error {
			conn, err := grpc.NewClient(env.tcpAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return err
			}
			defer conn.Close()
			_, err = zkhostv1.NewZkhostClient(conn).Status(ctxFor(t, 10*time.Second), &zkhostv1.StatusRequest{})
			return wantCode(err, codes.Unavailable, "")
		}},
	}
	return cases
}

func (env *badEnv) tlsConfig(t *testing.T) *tls.Config {
	pem, err := os.ReadFile(env.certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// ---- witnesses ----

func (env *badEnv) witnessCases() []badCase {
	good := witnesses(env.t, "chain", 7, 3)
	merkle := witnesses(env.t, "merkle", 7, 1)
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good[0])) }
	submitWant := func(name string, wits [][]byte, code codes.Code, text string) badCase {
		return env.apiCase(name, code, text, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "chain", Witnesses: wits})
			return err
		})
	}
	// A witness of the right shape whose public output is wrong: it parses, and
	// synthesis finds it does not satisfy the circuit.
	unsatisfied := mutate(func(b []byte) []byte { b[12+31] ^= 1; return b })
	// Wire assignments (solved elsewhere) instead of witnesses.
	assigned := assignments(env.t, "chain", good[:2])
	merkleAssigned := assignments(env.t, "merkle", merkle[:1])
	tampered := bytes.Clone(assigned[1])
	tampered[len(tampered)-1] ^= 1 // the last wire: the chain's last step
	submitAssignments := func(name string, as [][]byte, code codes.Code, text string) badCase {
		return env.apiCase(name, code, text, func(ctx context.Context, c zkhostv1.ZkhostClient) error {
			_, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "chain", Assignments: as})
			return err
		})
	}
	return []badCase{
		submitWant("garbage bytes", [][]byte{[]byte("not a witness at all")}, codes.InvalidArgument, "witness 0 is malformed: header says"),
		submitWant("shorter than a header", [][]byte{{0, 0, 0, 1}}, codes.InvalidArgument, "witness 0 is truncated: 4 bytes"),
		submitWant("truncated", [][]byte{good[0][:len(good[0])-5]}, codes.InvalidArgument, "a witness of another field, or truncated"),
		submitWant("header counts disagree", [][]byte{mutate(func(b []byte) []byte { b[11] = 9; return b })}, codes.InvalidArgument, "is malformed: header says 1 public + 1 secret values but the vector has 9"),
		submitWant("witness of another circuit", merkle, codes.InvalidArgument, "circuit chain-k8 wants 1 public and 1 secret"),
		submitWant("scalar not below the modulus", [][]byte{mutate(func(b []byte) []byte {
			for i := 12; i < 44; i++ {
				b[i] = 0xff
			}
			return b
		})}, codes.InvalidArgument, "is not a BLS12-381 witness: invalid fr.Element encoding"),
		submitWant("one bad witness among good ones", [][]byte{good[0], good[1], []byte("bad"), good[2]}, codes.InvalidArgument, "witness 2 "),
		{name: "witness that does not satisfy the circuit", expect: "accepted, then the job fails: `synthesis:`, no proof", run: func(t *testing.T) error {
			job, err := env.main.client.Submit(ctxFor(t, 10*time.Second), api.SubmitRequest{Circuit: "chain", Witnesses: [][]byte{good[0], unsatisfied}})
			if err != nil {
				return fmt.Errorf("submit: %v", err)
			}
			done, _ := env.main.await(job.ID, time.Minute)
			if done.State != api.JobFailed || !strings.Contains(done.Error, "partition 1 failed after 1 attempt(s): synthesis:") {
				return fmt.Errorf("job %s: %q, want failed by synthesis of partition 1", done.State, done.Error)
			}
			for _, p := range done.Partitions {
				if len(p.Proof) > 0 {
					return fmt.Errorf("a failed job returned a proof for partition %d", p.Index)
				}
			}
			return nil
		}},
		submitAssignments("wire assignment truncated", [][]byte{assigned[0], assigned[1][:len(assigned[1])-7]}, codes.InvalidArgument, "(truncated, or trailing bytes)"),
		submitAssignments("wire assignment of another circuit", merkleAssigned, codes.InvalidArgument, "circuit chain-k8 has"),
		submitAssignments("a witness sent as a wire assignment", good[:1], codes.InvalidArgument, "wire assignment 0 is not a wire assignment"),
		submitWant("a wire assignment sent as a witness", assigned[:1], codes.InvalidArgument, "witness 0 is a wire assignment, not a gnark witness"),
		{name: "wire assignment that does not satisfy the circuit", expect: "accepted, then the job fails naming the constraint: `does not satisfy constraint`, no proof", run: func(t *testing.T) error {
			job, err := env.main.client.Submit(ctxFor(t, 10*time.Second), api.SubmitRequest{Circuit: "chain", Assignments: [][]byte{assigned[0], tampered}})
			if err != nil {
				return fmt.Errorf("submit: %v", err)
			}
			done, _ := env.main.await(job.ID, time.Minute)
			if done.State != api.JobFailed || !strings.Contains(done.Error, "partition 1 failed after 1 attempt(s): synthesis:") ||
				!strings.Contains(done.Error, "does not satisfy constraint") {
				return fmt.Errorf("job %s: %q, want failed by partition 1's assignment, naming the constraint", done.State, done.Error)
			}
			for _, p := range done.Partitions {
				if len(p.Proof) > 0 {
					return fmt.Errorf("a failed job returned a proof for partition %d", p.Index)
				}
			}
			return nil
		}},
	}
}

// ---- keys ----

// serveFails runs `zkhost serve` on conf and expects it to exit with an error
// containing want.
func serveFails(t *testing.T, conf hostConf, want string, logWant ...string) error {
	return serveFailsIn(t.TempDir(), conf, want, logWant...)
}

// serveFailsIn is serveFails with the daemon's files in dir (its state
// directory is dir/state).
func serveFailsIn(dir string, conf hostConf, want string, logWant ...string) error {
	state := filepath.Join(dir, "state")
	cfg := filepath.Join(dir, "zkhost.toml")
	if err := os.WriteFile(cfg, []byte(conf.toml(state, filepath.Join(dir, "zk.sock"))), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkhostBin(), "serve", "--config", cfg)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("zkhost serve: %v, want it to refuse to start\n%s", err, tail(out, 20))
	}
	// The error is the last thing zkhost prints; it may span lines (go-plugin's
	// errors do).
	i := strings.LastIndex(string(out), "\nzkhost serve: ")
	if i < 0 {
		return fmt.Errorf("zkhost serve printed no error line\n%s", tail(out, 20))
	}
	msg := string(out[i+1:])
	if !strings.Contains(msg, want) {
		return fmt.Errorf("zkhost serve failed with %q, want it to say %q", msg, want)
	}
	for _, w := range logWant {
		if !strings.Contains(string(out[:i]), w) {
			return fmt.Errorf("the log does not say %q:\n%s", w, tail(out, 20))
		}
	}
	return nil
}

func tail(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// chainKeys returns a circuits section serving a damaged copy of chain's key set:
// damage gets the copy's directory and key name.
func chainKeys(t *testing.T, damage func(dir, name string)) string {
	dir := filepath.Join(t.TempDir(), "keys")
	name := fixtures["chain"].spec.ID()
	copyKeySet(t, keyDir, dir, name)
	damage(dir, name)
	return fmt.Sprintf("[[circuit]]\nname = \"chain\"\nkeys = %q\n\n", dir)
}

func (env *badEnv) keyCase(name, want string, damage func(t *testing.T, dir, key string)) badCase {
	return badCase{name: name, expect: "`zkhost serve` exits: `" + want + "`", run: func(t *testing.T) error {
		circuits := chainKeys(t, func(dir, key string) { damage(t, dir, key) })
		return serveFails(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: circuits}, want)
	}}
}

func (env *badEnv) keyCases() []badCase {
	pkPath := func(dir, key string) string { _, _, pk, _ := circuit.Paths(dir, key); return pk }
	otherName := fixtures["merkle"].spec.ID()
	return []badCase{
		env.keyCase("pk section corrupt", "is corrupt: SHA-256", func(t *testing.T, dir, key string) {
			// One bit of a G1 point in section g1_k: the file stays well formed,
			// only the section's SHA-256 tells.
			f, err := keyfile.Open(pkPath(dir, key))
			if err != nil {
				t.Fatal(err)
			}
			sec := f.Sections()[keyfile.SectionG1K-1]
			f.Close()
			flipBit(t, pkPath(dir, key), int64(sec.Offset+sec.Length/2))
		}),
		env.keyCase("pk truncated", "file is truncated or section", func(t *testing.T, dir, key string) {
			st, err := os.Stat(pkPath(dir, key))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(pkPath(dir, key), st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}),
		env.keyCase("pk shorter than its header", "shorter than the", func(t *testing.T, dir, key string) {
			if err := os.Truncate(pkPath(dir, key), 100); err != nil {
				t.Fatal(err)
			}
		}),
		env.keyCase("pk bad magic", "bad magic", func(t *testing.T, dir, key string) { flipBit(t, pkPath(dir, key), 0) }),
		env.keyCase("pk of another circuit", "the files are not one key set", func(t *testing.T, dir, key string) {
			_, _, otherPK, _ := circuit.Paths(keyDir, otherName)
			copyFile(t, otherPK, pkPath(dir, key), 0o644)
		}),
		env.keyCase("vk of another setup", "does not match", func(t *testing.T, dir, key string) {
			_, otherVK, _, _ := circuit.Paths(env.otherKeys, key)
			_, vk, _, _ := circuit.Paths(dir, key)
			copyFile(t, otherVK, vk, 0o644)
		}),
		env.keyCase("ccs truncated", "is not a gnark constraint system (bad length header or truncated)", func(t *testing.T, dir, key string) {
			ccs, _, _, _ := circuit.Paths(dir, key)
			if err := os.Truncate(ccs, 40); err != nil {
				t.Fatal(err)
			}
		}),
		env.keyCase("metadata not JSON", "bad metadata", func(t *testing.T, dir, key string) {
			_, _, _, meta := circuit.Paths(dir, key)
			if err := os.WriteFile(meta, []byte("{not json"), 0o644); err != nil {
				t.Fatal(err)
			}
		}),
		env.keyCase("missing verifying key", "chain-k8.vk: no such file or directory", func(t *testing.T, dir, key string) {
			_, vk, _, _ := circuit.Paths(dir, key)
			if err := os.Remove(vk); err != nil {
				t.Fatal(err)
			}
		}),
		{name: "missing key directory", expect: "`zkhost serve` exits: `key directory`", run: func(t *testing.T) error {
			circuits := fmt.Sprintf("[[circuit]]\nname = \"chain\"\nkeys = %q\n", filepath.Join(t.TempDir(), "nokeys"))
			return serveFails(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: circuits}, "key directory")
		}},
		{name: "ambiguous key sets", expect: "`zkhost serve` exits: `is ambiguous`", run: func(t *testing.T) error {
			dir := filepath.Join(t.TempDir(), "keys")
			copyKeySet(t, keyDir, dir, fixtures["chain"].spec.ID())
			copyKeySet(t, keyDir, dir, fixtures["merkle"].spec.ID())
			for _, f := range keySetFiles(t, keyDir, fixtures["chain"].spec.ID()) {
				copyFile(t, f, filepath.Join(dir, strings.Replace(filepath.Base(f), "chain-k8", "chain-k9", 1)), 0o644)
			}
			circuits := fmt.Sprintf("[[circuit]]\nname = \"chain\"\nkeys = %q\n", dir)
			return serveFails(t, hostConf{Devices: []deviceConf{cpuDevice()}, Circuits: circuits}, `circuit "chain" is ambiguous`)
		}},
		{name: "pk replaced under a running daemon", expect: "the job fails: `digest_mismatch`; other circuits keep working", run: func(t *testing.T) error {
			key := fixtures["chain"].spec.ID()
			_, _, otherPK, _ := circuit.Paths(env.otherKeys, key)
			_, _, pk, _ := circuit.Paths(env.swapDir, "chainswap")
			// A rename gives the path a new file, as a careless key update would;
			// the daemon keeps its own mapping of the old one.
			tmp := pk + ".new"
			copyFile(t, otherPK, tmp, 0o644)
			if err := os.Rename(tmp, pk); err != nil {
				return err
			}
			job, err := env.main.client.Submit(ctxFor(t, 10*time.Second), api.SubmitRequest{Circuit: "chainswap", Witnesses: witnesses(t, "chain", 8, 1)})
			if err != nil {
				return fmt.Errorf("submit: %v", err)
			}
			done, _ := env.main.await(job.ID, time.Minute)
			if done.State != api.JobFailed || !strings.Contains(done.Error, "digest_mismatch") {
				return fmt.Errorf("job %s: %q, want failed with a digest mismatch", done.State, done.Error)
			}
			return nil
		}},
	}
}

// flipBit inverts the low bit of one byte of a file: at off, or len+off for a
// negative off.
func flipBit(t *testing.T, path string, off int64) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(data))
	}
	data[off] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// keySetFiles lists a key set's files (NAME.ccs, .vk, .pk, .json).
func keySetFiles(t testing.TB, dir, name string) []string {
	ccs, vk, pk, meta := circuit.Paths(dir, name)
	return []string{ccs, vk, pk, meta}
}

// copyKeySet copies key set name from src to dst.
func copyKeySet(t testing.TB, src, dst, name string) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range keySetFiles(t, src, name) {
		copyFile(t, f, filepath.Join(dst, filepath.Base(f)), 0o644)
	}
}

// ---- plugins ----

func (env *badEnv) pluginCase(name, want string, dev func(t *testing.T) deviceConf) badCase {
	return badCase{name: name, expect: "`zkhost serve` exits: `" + want + "`", run: func(t *testing.T) error {
		return serveFails(t, hostConf{Devices: []deviceConf{dev(t)}}, want)
	}}
}

// pluginCaseLog is pluginCase for a backend that dies before the handshake:
// go-plugin reports only that it read nothing, so the case also wants the
// backend's own stderr, which the host forwards to its log.
func (env *badEnv) pluginCaseLog(name, want, logWant string, dev func(t *testing.T) deviceConf) badCase {
	c := env.pluginCase(name, want, dev)
	c.expect += "; the log has the backend's `" + logWant + "`"
	c.run = func(t *testing.T) error {
		return serveFails(t, hostConf{Devices: []deviceConf{dev(t)}}, want, logWant)
	}
	return c
}

func (env *badEnv) pluginCases() []badCase {
	fault := func(opts map[string]string) func(t *testing.T) deviceConf {
		return func(*testing.T) deviceConf { return faultDevice(opts) }
	}
	return []badCase{
		env.pluginCase("wrong checksum", "checksum mismatch: SHA-256 is", func(t *testing.T) deviceConf {
			d := cpuDevice()
			sum := sha256.Sum256([]byte("another binary"))
			d.SHA256 = hex.EncodeToString(sum[:])
			return d
		}),
		env.pluginCase("right checksum of another binary", "checksum mismatch", func(t *testing.T) deviceConf {
			d := cpuDevice()
			d.SHA256 = fileSHA256(t, faultBin())
			return d
		}),
		env.pluginCase("a binary that is not a plugin", "Unrecognized remote plugin message", func(t *testing.T) deviceConf {
			return deviceConf{Backend: zkhostBin()}
		}),
		env.pluginCase("stdout noise before the handshake", "Unrecognized remote plugin message: hello from a noisy backend", fault(map[string]string{"stdout-noise": "hello from a noisy backend"})),
		env.pluginCaseLog("exit before the handshake", "Failed to read any lines from plugin's stdout", "fault: exiting before the handshake",
			fault(map[string]string{"exit-before-handshake": "true"})),
		env.pluginCase("crash in describe", "describe ", fault(map[string]string{"crash": "describe"})),
		env.pluginCase("wrong API version", "speaks backend API versions [99], this host speaks 2", fault(map[string]string{"api-version": "99"})),
		env.pluginCase("declares no partition in flight", "declares max in flight 0, need at least 1", fault(map[string]string{"max-in-flight-claim": "0"})),
		env.pluginCase("proves on none of the circuits' curves", `backend faultbackend proves on [bn254] only, and the circuits served need [bls12-381]`, fault(map[string]string{"curves": "bn254"})),
		env.pluginCaseLog("unknown backend option", "Failed to read any lines from plugin's stdout", "flag provided but not defined: -thread", func(t *testing.T) deviceConf {
			return deviceConf{Backend: cpuBin(), Options: map[string]string{"thread": "1"}}
		}),
		env.pluginCase("selector does not match", `selector wants model "H100", backend reports`, func(t *testing.T) deviceConf {
			d := cpuDevice()
			d.Raw = `selector = { model = "H100" }`
			return d
		}),
		env.pluginCase("missing binary", "no such file", func(t *testing.T) deviceConf {
			return deviceConf{Backend: filepath.Join(t.TempDir(), "zkhost-backend-nope")}
		}),
		env.pluginCase("binary not executable", "not executable", func(t *testing.T) deviceConf {
			p := filepath.Join(t.TempDir(), "backend")
			copyFile(t, cpuBin(), p, 0o644)
			return deviceConf{Backend: p}
		}),
		env.pluginCase("backend is a directory", "is a directory", func(t *testing.T) deviceConf {
			return deviceConf{Backend: t.TempDir()}
		}),
	}
}

func fileSHA256(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ---- helpers ----

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// writeDoc writes docs/bad-inputs.md from the groups.
func writeDoc(t *testing.T, groups []badGroup) {
	var b strings.Builder
	b.WriteString("# Bad inputs\n\n")
	b.WriteString("Every bad input below is a case of `TestBadInputs` in `e2e/badinput_test.go`, run by\n")
	b.WriteString("`go test ./e2e/`. Each case expects a specific gRPC code or error text, and each group runs\n")
	b.WriteString("while a normal job (3 partitions of the merkle circuit) runs on a shared daemon; the group\n")
	b.WriteString("passes only if that job completes and every proof verifies with gnark's `groth16.Verify`.\n")
	b.WriteString("This file is generated: `go test ./e2e/ -run TestBadInputs -e2e.write-bad-inputs-doc`.\n")
	total := 0
	for _, g := range groups {
		total += len(g.cases)
	}
	fmt.Fprintf(&b, "\n%d cases in %d groups.\n", total, len(groups))
	for _, g := range groups {
		fmt.Fprintf(&b, "\n## %s (%d)\n\n%s\n\n| group | case | expected |\n| --- | --- | --- |\n", g.name, len(g.cases), g.doc)
		for _, c := range g.cases {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", g.name, c.name, strings.ReplaceAll(c.expect, "|", `\|`))
		}
	}
	if err := os.WriteFile(badInputsDoc, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
