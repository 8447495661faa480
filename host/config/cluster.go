package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// Cluster is the [cluster] table: this host shares one work queue with other
// hosts through NATS JetStream (host/cluster). Nil when the table is absent:
// the daemon then runs alone, with no NATS, as it always has.
type Cluster struct {
	// Name is this host's name in the cluster (logs, the proof records' host);
	// the machine's host name by default.
	Name string
	// URLs are the NATS servers to connect to ("nats://host:4222"). Empty with
	// Embedded: the host connects to its own embedded server.
	URLs []string
	// Embedded runs a NATS server inside this zkhost serve.
	Embedded bool
	// Listen is the embedded server's client address (host:port).
	Listen string
	// ClusterName names the NATS cluster the embedded servers form.
	ClusterName string
	// ClusterListen is the embedded server's route address (host:port); empty
	// for a single embedded server.
	ClusterListen string
	// Routes are the other embedded servers' route URLs ("nats-route://host:6222").
	Routes []string
	// StoreDir holds the embedded server's JetStream files; <state_dir>/nats by default.
	StoreDir string
	// Replicas is how many servers keep each JetStream stream: 3 by default
	// with routes or external URLs, 1 for a lone embedded server.
	Replicas int
	// AckWait is how long a host may hold a partition without word before
	// JetStream gives it to another host (a host extends it while it proves).
	AckWait time.Duration
	// MaxDeliver is how many deliveries of a partition may fail before its job fails.
	MaxDeliver int
	// Pull is how many partitions this host holds at once; 0 means its device
	// slots plus its synthesis workers (a synthesis host: its workers).
	Pull int
	// Role is what this host does for the cluster: RoleProve (the default)
	// proves on its devices, synthesizing what it pulls unsolved; a
	// RoleSynthesize host has no devices and only solves partitions,
	// shipping their compact wire assignments to the proving hosts.
	Role string
	// ReadyMax is the most synthesized partitions waiting in the cluster for
	// a proving host: a synthesis host pulls no more work while as many
	// wait, so that it runs ahead of the devices by a bounded amount.
	ReadyMax int
	// MaxPayload is the embedded server's largest message (8 MiB by default,
	// NATS's advised ceiling).
	MaxPayload uint64
	// InlineMax is the largest input a partition message carries itself (1
	// MiB by default); a larger one goes to the object store and the message
	// carries its name, size and digest.
	InlineMax uint64
	// User and PasswordFile, or TokenFile, or NkeySeedFile, or CredsFile are
	// the NATS credentials (the embedded server requires the same; it takes
	// no CredsFile, which needs a server in operator mode). The files are
	// read again at every reconnection, so a rotated credential is picked up
	// without a restart.
	User         string
	PasswordFile string
	TokenFile    string
	NkeySeedFile string
	CredsFile    string
	// Prefix starts every name this cluster uses in NATS (subjects, the
	// stream, the buckets, the consumers): two clusters with different
	// prefixes share one NATS account without meeting. "zkhost" by default.
	Prefix string
	// Reconfigure lets this host change the cluster-wide settings of the
	// existing stream, consumers and buckets to its own (replicas, ack_wait,
	// [journal] retention). Without it a host whose settings differ refuses
	// to start. Set by zkhost serve --cluster-reconfigure, never by the file:
	// a change of the whole cluster is a deliberate act, not a leftover key.
	Reconfigure bool
	// HeldDir records the partitions this host holds (<state_dir>/cluster-held),
	// so that after a crash it hands them back at once instead of leaving
	// them until ack_wait passes; empty without a state_dir.
	HeldDir string
	// TLSCA, TLSCert and TLSKey secure client connections (and, for the
	// embedded server, its listeners and routes).
	TLSCA   string
	TLSCert string
	TLSKey  string
}

// DefaultMaxPayload and DefaultInlineMax are [cluster] max_payload and
// inline_max when unset (a Cluster built without this parser, zero, means
// them too).
const (
	DefaultMaxPayload = 8 << 20
	// DefaultAckWait is [cluster] ack_wait when unset: what the death of a
	// host costs its partitions. A host proving a long partition extends it
	// every fifth of it, so it need not cover a partition's proving time.
	DefaultAckWait   = 10 * time.Second
	DefaultInlineMax = 1 << 20
	// DefaultReadyMax is cluster.ready_max's default: a few partitions for
	// each of a few proving hosts' devices.
	DefaultReadyMax = 16
)

// The roles of a cluster host (cluster.role).
const (
	RoleProve      = "prove"
	RoleSynthesize = "synthesize"
)

// InlineMargin is what a partition message needs beside its input (subject,
// headers): an input above max_payload less this goes to the object store.
const InlineMargin = 1 << 10

// cluster reads [cluster]; nil when the table is absent.
func (ck *checker) cluster(root *table, stateDir string) *Cluster {
	_, present := root.lookup("cluster")
	t := root.sub("cluster")
	if !present {
		t.finish()
		return nil
	}
	c := &Cluster{ClusterName: "zkhost", AckWait: DefaultAckWait, Prefix: "zkhost", MaxDeliver: 3, Listen: "127.0.0.1:4222",
		MaxPayload: DefaultMaxPayload, InlineMax: DefaultInlineMax, Role: RoleProve, ReadyMax: DefaultReadyMax}
	if host, err := os.Hostname(); err == nil {
		c.Name = host
	}
	if s, ok := t.str("name"); ok && strings.TrimSpace(s) != "" {
		c.Name = s
	}
	if err := checkName(c.Name); err != nil || strings.ContainsAny(c.Name, " .*>") {
		ck.errorf(t.key("name"), "bad host name %q: want letters, digits, - and _", c.Name)
	}
	c.URLs = t.strList("urls")
	if v, ok := t.boolean("embedded"); ok {
		c.Embedded = v
	}
	if s, ok := t.str("listen"); ok {
		c.Listen = s
	}
	if s, ok := t.str("cluster_name"); ok {
		c.ClusterName = s
	}
	if s, ok := t.str("cluster_listen"); ok {
		c.ClusterListen = s
	}
	c.Routes = t.strList("routes")
	if stateDir != "" {
		c.StoreDir = filepath.Join(stateDir, "nats")
		c.HeldDir = filepath.Join(stateDir, "cluster-held")
	}
	if s, ok := t.str("prefix"); ok {
		c.Prefix = s
		if !validPrefix(s) {
			ck.errorf(t.key("prefix"), "bad prefix %q: want 1 to 32 letters, digits, - and _, starting with a letter", s)
		}
	}
	if p, ok := t.path("store_dir"); ok {
		c.StoreDir = p
	}
	if n, ok := t.integer("replicas", 1, math.MaxInt32); ok {
		c.Replicas = n
	}
	if d, ok := t.duration("ack_wait", span{time.Second, 24 * time.Hour, ""}); ok {
		c.AckWait = d
	}
	if n, ok := t.integer("max_deliver", 1, 100); ok {
		c.MaxDeliver = n
	}
	if n, ok := t.integer("pull", 0, maxThreads); ok {
		c.Pull = n
	}
	if s, ok := t.str("role"); ok {
		if s != RoleProve && s != RoleSynthesize {
			ck.errorf(t.key("role"), "unknown role %q: want %q (prove on this host's devices) or %q (solve partitions for the proving hosts, no devices)", s, RoleProve, RoleSynthesize)
		}
		c.Role = s
	}
	if n, ok := t.integer("ready_max", 1, 1<<16); ok {
		c.ReadyMax = n
	}
	for _, k := range []struct {
		name string
		to   *uint64
	}{{"max_payload", &c.MaxPayload}, {"inline_max", &c.InlineMax}} {
		if s, ok := t.size(k.name); ok {
			if s.IsPercent() {
				ck.errorf(t.key(k.name), "want a size in bytes, not a percentage")
				continue
			}
			*k.to = s.Bytes
		}
	}
	c.User, _ = t.str("user")
	c.PasswordFile, _ = t.optPath("password_file")
	c.NkeySeedFile, _ = t.optPath("nkey_seed_file")
	c.TokenFile, _ = t.optPath("token_file")
	c.CredsFile, _ = t.optPath("creds_file")
	c.TLSCA, _ = t.optPath("tls_ca")
	c.TLSCert, _ = t.optPath("tls_cert")
	c.TLSKey, _ = t.optPath("tls_key")
	t.finish()
	ck.checkCluster(t, c)
	return c
}

// checkCluster checks [cluster]'s settings together. The rule of [api]
// tcp_address holds here: whatever reaches beyond this machine is TLS with
// credentials, or refused.
func (ck *checker) checkCluster(t *table, c *Cluster) {
	if !c.Embedded && len(c.URLs) == 0 {
		ck.errorf(t.key("urls"), "no NATS server: set cluster.urls to the NATS servers, or cluster.embedded = true to run one in this host")
	}
	if c.Replicas == 0 {
		c.Replicas = 3
		if c.Embedded && len(c.Routes) == 0 && len(c.URLs) == 0 {
			c.Replicas = 1
		}
	}
	if c.Replicas > 5 {
		ck.errorf(t.key("replicas"), "%d: JetStream keeps at most 5 replicas", c.Replicas)
	}
	// The margin leaves room for a message's subject and headers; NATS
	// refuses a max_payload above 64 MiB.
	if c.MaxPayload < 4<<10 || c.MaxPayload > 64<<20 {
		ck.errorf(t.key("max_payload"), "%s: want 4KiB to 64MiB", FormatBytes(c.MaxPayload))
	} else if c.Embedded && c.InlineMax > c.MaxPayload-InlineMargin {
		ck.errorf(t.key("inline_max"), "%s does not fit a message of cluster.max_payload %s with its headers: want at most %s",
			FormatBytes(c.InlineMax), FormatBytes(c.MaxPayload), FormatBytes(c.MaxPayload-InlineMargin))
	}
	if (c.User == "") != (c.PasswordFile == "") {
		ck.errorf(t.key("user"), "cluster.user and cluster.password_file go together: set both, or neither")
	}
	var kinds []string
	lastKey := ""
	for _, k := range []struct {
		set       bool
		key, name string
	}{
		{c.User != "", "user", "cluster.user with cluster.password_file"}, {c.TokenFile != "", "token_file", "cluster.token_file"},
		{c.NkeySeedFile != "", "nkey_seed_file", "cluster.nkey_seed_file"}, {c.CredsFile != "", "creds_file", "cluster.creds_file"},
	} {
		if k.set {
			kinds, lastKey = append(kinds, k.name), k.key
		}
	}
	if len(kinds) > 1 {
		ck.errorf(t.key(lastKey), "set one kind of NATS credentials, not %s", strings.Join(kinds, " and "))
	}
	if c.Embedded && c.CredsFile != "" {
		ck.errorf(t.key("creds_file"), "the embedded server takes no JWT credentials (they need a NATS server in operator mode): use cluster.user with cluster.password_file, cluster.token_file or cluster.nkey_seed_file, or cluster.urls")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		ck.errorf(t.key("tls_cert"), "cluster.tls_cert and cluster.tls_key go together: set both, or neither")
	}
	creds := len(kinds) > 0
	// secure refuses an address beyond this machine that lacks what it needs:
	// a listener its certificate, a client the CA to check the server's, both
	// credentials, routes mutual TLS.
	secure := func(key, addr string, needCert bool) {
		if api.IsLoopback(addr) {
			return
		}
		var missing []string
		if needCert && c.TLSCert == "" {
			missing = append(missing, "cluster.tls_cert and cluster.tls_key")
		}
		if !needCert && c.TLSCA == "" {
			missing = append(missing, "cluster.tls_ca")
		}
		if !creds {
			missing = append(missing, "credentials (cluster.user with cluster.password_file, cluster.token_file, cluster.nkey_seed_file or cluster.creds_file)")
		}
		if key == "routes" || key == "cluster_listen" {
			if c.TLSCA == "" {
				missing = append(missing, "cluster.tls_ca (routes verify each other's certificates)")
			}
		}
		if len(missing) > 0 {
			ck.errorf(t.key(key), "%s is not a loopback address: NATS off this machine needs TLS and credentials; set %s, or use 127.0.0.1",
				addr, strings.Join(missing, ", "))
		}
	}
	for _, u := range c.URLs {
		if pu, err := url.Parse(u); err == nil && pu.User != nil {
			// A credential in a URL is printed wherever the URL is (logs,
			// errors, ps): the files are the only place for one.
			pu.User = url.User("REDACTED")
			ck.errorf(t.key("urls"), "%s carries a credential: remove it and set cluster.token_file, or cluster.user with cluster.password_file", pu.String())
			continue
		}
		hp, err := urlHostPort(u, "nats", "tls")
		if err != nil {
			ck.errorf(t.key("urls"), "%v", err)
			continue
		}
		secure("urls", hp, false)
	}
	if c.Embedded {
		if err := checkHostPort(c.Listen); err != nil {
			ck.errorf(t.key("listen"), "%v", err)
		} else {
			secure("listen", c.Listen, true)
		}
		if c.ClusterListen != "" {
			if err := checkHostPort(c.ClusterListen); err != nil {
				ck.errorf(t.key("cluster_listen"), "%v", err)
			} else {
				secure("cluster_listen", c.ClusterListen, true)
			}
		}
		if len(c.Routes) > 0 && c.ClusterListen == "" {
			ck.errorf(t.key("routes"), "routes need cluster.cluster_listen, the address the other servers reach this one at")
		}
		for _, r := range c.Routes {
			hp, err := urlHostPort(r, "nats-route", "nats", "tls")
			if err != nil {
				ck.errorf(t.key("routes"), "%v", err)
				continue
			}
			secure("routes", hp, true)
		}
		if c.StoreDir == "" {
			ck.errorf(t.key("store_dir"), "no store directory: set cluster.store_dir or state_dir")
		}
	} else {
		for _, k := range []string{"cluster_listen", "routes"} {
			if _, set := t.m[k]; set {
				ck.errorf(t.key(k), "set without cluster.embedded = true, the only server it configures")
			}
		}
	}
}

// validPrefix reports whether p can start NATS subjects, stream, bucket and
// consumer names alike.
func validPrefix(p string) bool {
	if len(p) == 0 || len(p) > 32 || !(p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// urlHostPort returns the host:port of a URL with one of schemes.
func urlHostPort(s string, schemes ...string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("bad URL %q: want %s://host:port", s, schemes[0])
	}
	ok := false
	for _, sc := range schemes {
		ok = ok || u.Scheme == sc
	}
	if !ok {
		return "", fmt.Errorf("bad URL %q: the scheme must be one of %s", s, strings.Join(schemes, ", "))
	}
	if u.Port() == "" {
		return "", fmt.Errorf("bad URL %q: no port", s)
	}
	return net.JoinHostPort(u.Hostname(), u.Port()), nil
}

// strList reads a list of strings; absent is nil.
func (t *table) strList(k string) []string {
	v, ok := t.lookup(k)
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		t.ck.errorf(t.key(k), "want a list of strings, got %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			t.ck.errorf(t.key(k), "element %d: want a string, got %s", i, describe(e))
			continue
		}
		out = append(out, s)
	}
	return out
}
