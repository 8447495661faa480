package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/config"
)

// leastPrivilege is a user allowed exactly Permissions(prefix).
func leastPrivilege(name, pass, prefix string, reconfigure bool) *server.User {
	pub, sub := Permissions(prefix, reconfigure)
	return &server.User{Username: name, Password: pass, Permissions: &server.Permissions{
		Publish: &server.SubjectPermission{Allow: pub}, Subscribe: &server.SubjectPermission{Allow: sub}}}
}

// TestLeastPrivilege: hosts whose NATS user has exactly the documented
// permissions (Permissions, docs/cluster.md) create the cluster, queue,
// pull and ack partitions, store and read inputs, record proofs, await, list
// and cancel jobs, with no refusal from NATS; a user without the right to
// create the stream is refused within seconds, in NATS's words.
func TestLeastPrivilege(t *testing.T) {
	_, urls, _ := authServers(t, 1, func() []*server.User {
		narrow := leastPrivilege("narrow", "p2", "fresh", false)
		narrow.Permissions.Publish.Deny = []string{"$JS.API.STREAM.CREATE.>"}
		return []*server.User{leastPrivilege("zk", "p1", "zkhost", false), leastPrivilege("zk2", "p3", "other", false), narrow}
	})
	dir := t.TempDir()
	for _, p := range []string{"p1", "p2", "p3"} {
		writeFile(t, filepath.Join(dir, p), p)
	}
	cc := config.Cluster{Name: "h0", URLs: urls, Replicas: 1, User: "zk", PasswordFile: filepath.Join(dir, "p1"), InlineMax: 8}
	a, err := startMember(t, cc, time.Hour, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cc.Name = "h1"
	b, err := startMember(t, cc, time.Hour, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Queue a job of two partitions, one input inline and one an object.
	rec := createJob(t, a, 2, api.ClassNormal)
	inputs := [][]byte{{1}, []byte("an input too large for a message")}
	rec.markObjects(inputs, a.inlineMax())
	if err := a.publish(ctx, rec, inputs, false); err != nil {
		t.Fatal(err)
	}
	events := make(chan api.JobEvent, 8)
	go b.Await(ctx, rec.ID, func(ev api.JobEvent) error { events <- ev; return nil })
	for range 2 {
		msg := b.next(ctx, b.cons[:])
		if msg == nil {
			t.Fatal("no partition pulled")
		}
		in, err := b.readInput(ctx, msg, rec.ID, mustAtoi(t, msg.Headers().Get(hdrPartition)))
		if err != nil {
			t.Fatalf("reading an input: %v", err)
		}
		idx := mustAtoi(t, msg.Headers().Get(hdrPartition))
		if string(in) != string(inputs[idx]) {
			t.Fatalf("partition %d's input %q, want %q", idx, in, inputs[idx])
		}
		msg.InProgress()
		if err := b.recordProof(ctx, rec.ID, idx, proofRecord{Proof: []byte{byte(idx)}, Host: "h1"}); err != nil {
			t.Fatal(err)
		}
		if err := msg.DoubleAck(ctx); err != nil {
			t.Fatalf("ack: %v", err)
		}
	}
	for ev := range events {
		if ev.Kind.Terminal() {
			if ev.Kind != api.EventJobDone {
				t.Fatalf("await ended with %v", ev.Kind)
			}
			break
		}
	}
	if jobs, err := a.List(ctx, api.ListFilter{}); err != nil || len(jobs) != 1 {
		t.Fatalf("list: %d jobs, %v", len(jobs), err)
	}
	other := createJob(t, a, 1, api.ClassHigh)
	if _, err := a.Cancel(api.WithIdentity(ctx, api.Identity{Admin: true}), other.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	for _, m := range []*Cluster{a, b} {
		if err := m.conn.refusedSince(time.Time{}); err != nil {
			t.Errorf("NATS refused %s: %v", m.cfg.Name, err)
		}
	}
	// Another cluster of the same account, with its own prefix and a user
	// allowed only its names, never meets this one.
	oc := config.Cluster{Name: "o0", URLs: urls, Replicas: 1, User: "zk2", PasswordFile: filepath.Join(dir, "p3"), Prefix: "other"}
	o, err := startMember(t, oc, time.Hour, 30*time.Second)
	if err != nil {
		t.Fatalf("a second cluster beside the first: %v", err)
	}
	if _, _, err := o.getJob(ctx, rec.ID); !errors.Is(err, errNotFound) {
		t.Errorf("the other cluster sees this one's job: %v", err)
	}

	// A user allowed all but creating the stream is refused: fast, and as
	// NATS said it (it used to wait two minutes, then blame the servers).
	begun := time.Now()
	_, err = startMember(t, config.Cluster{Name: "h2", URLs: urls, Replicas: 1, User: "narrow", PasswordFile: filepath.Join(dir, "p2"), Prefix: "fresh"}, time.Hour, 2*time.Minute)
	if err == nil || !strings.Contains(err.Error(), `Permissions Violation for Publish to "$JS.API.STREAM.CREATE.FRESH_PARTITIONS"`) {
		t.Fatalf("a user without rights: %v, want NATS's permissions violation", err)
	}
	d := time.Since(begun)
	t.Logf("refused after %v: %v", d, err)
	// A refusal ends the request waiting for it: well within one setup
	// attempt's 2 s, whose end it used to wait for.
	if d > 1500*time.Millisecond {
		t.Errorf("refused after %v, want at once", d)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// TestTokenAndCreds: a host logs in with a token file (an embedded server
// requiring it) and with a NATS JWT .creds file (a server in operator mode);
// a wrong token is refused, and the error never shows the token.
func TestTokenAndCreds(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, "t0ken-s3cret\n")
	cc := config.Cluster{Name: "h0", Embedded: true, Listen: apitest.FreeAddr(t), StoreDir: t.TempDir(), Replicas: 1, TokenFile: tokenFile}
	emb, err := startMember(t, cc, time.Hour, 30*time.Second)
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, "wrong-t0ken")
	_, err = startMember(t, config.Cluster{Name: "h1", URLs: []string{emb.srv.ClientURL()}, Replicas: 1, TokenFile: bad}, time.Hour, 10*time.Second)
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("a wrong token: %v, want an authorization error", err)
	}
	if strings.Contains(err.Error(), "t0ken") {
		t.Errorf("the error shows a token: %v", err)
	}
	good, err := startMember(t, config.Cluster{Name: "h2", URLs: []string{emb.srv.ClientURL()}, Replicas: 1, TokenFile: tokenFile}, time.Hour, 10*time.Second)
	if err != nil {
		t.Fatalf("the right token from outside: %v", err)
	}
	createJob(t, good, 1, api.ClassNormal)

	// Operator mode: an operator signs an account, the account a user; the
	// server trusts the operator and resolves the account from memory.
	okp, _ := nkeys.CreateOperator()
	opub, _ := okp.PublicKey()
	oc := jwt.NewOperatorClaims(opub)
	akp, _ := nkeys.CreateAccount()
	apub, _ := akp.PublicKey()
	ac := jwt.NewAccountClaims(apub)
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	ajwt, err := ac.Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	ukp, _ := nkeys.CreateUser()
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	ujwt, err := uc.Encode(akp)
	if err != nil {
		t.Fatal(err)
	}
	useed, _ := ukp.Seed()
	creds, err := jwt.FormatUserConfig(ujwt, useed)
	if err != nil {
		t.Fatal(err)
	}
	credsFile := filepath.Join(dir, "zk.creds")
	if err := os.WriteFile(credsFile, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	sys, _ := nkeys.CreateAccount()
	spub, _ := sys.PublicKey()
	sc := jwt.NewAccountClaims(spub)
	sjwt, _ := sc.Encode(okp)
	res := &server.MemAccResolver{}
	res.Store(apub, ajwt)
	res.Store(spub, sjwt)
	addr := apitest.FreeAddr(t)
	opts, err := serverOptions(&config.Cluster{Name: "op", Listen: addr, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	opts.TrustedOperators = []*jwt.OperatorClaims{oc}
	opts.AccountResolver = res
	opts.SystemAccount = spub
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("operator-mode server not ready")
	}
	if err := s.EnableJetStream(&server.JetStreamConfig{StoreDir: t.TempDir()}); err != nil && !strings.Contains(err.Error(), "already") {
		t.Logf("enabling JetStream: %v", err)
	}
	j, err := startMember(t, config.Cluster{Name: "h3", URLs: []string{"nats://" + addr}, Replicas: 1, CredsFile: credsFile}, time.Hour, 30*time.Second)
	if err != nil {
		t.Fatalf("creds: %v", err)
	}
	createJob(t, j, 1, api.ClassNormal)
}

// TestPermissionsDocumented: docs/cluster.md lists every subject a host
// needs, as Permissions builds them (one source: the doc is checked against
// the code).
func TestPermissionsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cluster.md")
	if err != nil {
		t.Fatal(err)
	}
	pub, sub := Permissions("zkhost", true)
	for _, s := range append(pub, sub...) {
		if !strings.Contains(string(doc), `"`+s+`"`) && !strings.Contains(string(doc), "`"+s+"`") {
			t.Errorf("docs/cluster.md does not list %s", s)
		}
	}
}
