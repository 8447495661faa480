package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/zkhost/zkhost/host/config"
)

// startServer runs the embedded NATS server of [cluster] embedded = true and
// waits until it takes connections.
func startServer(cc *config.Cluster, log hclog.Logger) (*server.Server, error) {
	opts, err := serverOptions(cc)
	if err != nil {
		return nil, err
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	s.SetLoggerV2(natsLogger{log}, false, false, false)
	s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded NATS server did not listen on %s within 30s (is the port taken?)", cc.Listen)
	}
	return s, nil
}

// serverOptions are the embedded server's options from [cluster]: the
// credentials are read from their files now.
func serverOptions(cc *config.Cluster) (*server.Options, error) {
	host, port, err := splitHostPort(cc.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen: %w", err)
	}
	opts := &server.Options{
		ServerName: cc.Name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   cc.StoreDir,
		NoSigs:     true, // zkhost serve handles signals
		// A partition message carries an input up to inline_max; a larger
		// one travels in the object store, in chunks below this.
		MaxPayload: int32(maxPayload(cc)),
	}
	if err := os.MkdirAll(cc.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster.store_dir: %w", err)
	}
	if cc.TLSCert != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cc.TLSCert, KeyFile: cc.TLSKey})
		if err != nil {
			return nil, fmt.Errorf("cluster.tls_cert: %w", err)
		}
		opts.TLSConfig, opts.TLS, opts.TLSTimeout = tc, true, 5
	}
	switch {
	case cc.PasswordFile != "":
		pass, err := readSecret("cluster.password_file", cc.PasswordFile)
		if err != nil {
			return nil, err
		}
		opts.Username, opts.Password = cc.User, pass
	case cc.TokenFile != "":
		token, err := readSecret("cluster.token_file", cc.TokenFile)
		if err != nil {
			return nil, err
		}
		opts.Authorization = token
	case cc.NkeySeedFile != "":
		pub, err := nkeyPublic(cc.NkeySeedFile)
		if err != nil {
			return nil, err
		}
		opts.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	}
	if cc.ClusterListen != "" {
		h, p, err := splitHostPort(cc.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("cluster.cluster_listen: %w", err)
		}
		opts.Cluster = server.ClusterOpts{Name: cc.ClusterName, Host: h, Port: p}
		if cc.TLSCert != "" && cc.TLSCA != "" {
			tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cc.TLSCert, KeyFile: cc.TLSKey, CaFile: cc.TLSCA, Verify: true})
			if err != nil {
				return nil, fmt.Errorf("cluster.tls_ca: %w", err)
			}
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = tc, 5
		}
		for _, r := range cc.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("cluster.routes: %w", err)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	return opts, nil
}

func splitHostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return h, n, err
}

// readSecret reads a credential file: its content, trimmed. The error names
// the file, never its content.
func readSecret(key, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s: %s is empty", key, path)
	}
	return s, nil
}

// nkeyPublic reads an nkey seed file and returns its user public key.
func nkeyPublic(path string) (string, error) {
	seed, err := readSecret("cluster.nkey_seed_file", path)
	if err != nil {
		return "", err
	}
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		return "", fmt.Errorf("cluster.nkey_seed_file: %s: %w", path, err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return "", fmt.Errorf("cluster.nkey_seed_file: %s holds no user seed", path)
	}
	return pub, nil
}

// nkeySign signs a server's nonce with the seed in path, read again for
// every signature (as a password file is read again for every connection).
func nkeySign(path string, nonce []byte) ([]byte, error) {
	seed, err := readSecret("cluster.nkey_seed_file", path)
	if err != nil {
		return nil, err
	}
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		return nil, fmt.Errorf("cluster.nkey_seed_file: %s: %w", path, err)
	}
	defer kp.Wipe()
	return kp.Sign(nonce)
}

// connect opens the host's NATS connection: to its embedded server in process
// when it has one and no URLs, else to the URLs. The connection never gives
// up: it reconnects without end, reading the credential files again at every
// attempt (so a rotated password, token, nkey seed or .creds file is picked
// up, and an authorization error does not end it), and st follows its state
// for Status and for the requests that would otherwise wait on a dead link.
// What cannot heal in place (an nkey seed that now holds another key, whose
// public key the connection was made with) is reported to st as fatal: the
// host exits for its supervisor to start it again.
func connect(cc *config.Cluster, srv *server.Server, log hclog.Logger, st *connState) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("zkhost " + cc.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		// By default nats.go stops reconnecting after the same authorization
		// error twice: a rotated password then left a live host that
		// refused all work, for good.
		nats.IgnoreAuthErrorAbort(),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			st.disconnected(err)
			if err != nil {
				log.Warn("NATS connection lost; reconnecting", "error", err)
			}
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			if st.reconnectFailed(err) {
				log.Warn("NATS reconnection failed; trying again", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			st.connected(nc.ConnectedUrlRedacted())
			log.Info("NATS reconnected", "server", nc.ConnectedUrlRedacted())
		}),
		nats.ClosedHandler(func(nc *nats.Conn) { st.closed(nc.LastError()) }),
		// NATS's asynchronous errors (a permission refused, a slow consumer)
		// come only here: each is logged as NATS said it and kept for the
		// request it failed (request.go).
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			st.refused(err)
			if sub != nil {
				log.Error("NATS refused", "error", err, "subscription", sub.Subject)
				return
			}
			log.Error("NATS refused", "error", err)
		}),
	}
	switch {
	case cc.PasswordFile != "":
		opts = append(opts, nats.UserInfoHandler(func() (string, string) {
			pass, err := readSecret("cluster.password_file", cc.PasswordFile)
			if err != nil {
				log.Error("reading the NATS password", "error", err)
			}
			return cc.User, pass
		}))
	case cc.TokenFile != "":
		opts = append(opts, nats.TokenHandler(func() string {
			token, err := readSecret("cluster.token_file", cc.TokenFile)
			if err != nil {
				log.Error("reading the NATS token", "error", err)
			}
			return token
		}))
	case cc.NkeySeedFile != "":
		pub, err := nkeyPublic(cc.NkeySeedFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Nkey(pub, func(nonce []byte) ([]byte, error) {
			if now, err := nkeyPublic(cc.NkeySeedFile); err == nil && now != pub {
				st.fatal(fmt.Errorf("cluster.nkey_seed_file %s now holds another key (%s, was %s): this connection cannot change its key; exiting so that the host starts again with it", cc.NkeySeedFile, now, pub))
			}
			return nkeySign(cc.NkeySeedFile, nonce)
		}))
	case cc.CredsFile != "":
		// nats.go reads the file (JWT and seed) again at every connection.
		opts = append(opts, nats.UserCredentials(cc.CredsFile))
	}
	if cc.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cc.TLSCA))
	}
	if cc.TLSCert != "" && !cc.Embedded {
		opts = append(opts, nats.ClientCert(cc.TLSCert, cc.TLSKey))
	}
	servers := strings.Join(cc.URLs, ",")
	shown := strings.Join(redactURLs(cc.URLs), ",")
	if srv != nil && len(cc.URLs) == 0 {
		opts = append(opts, nats.InProcessServer(srv))
		servers, shown = "", "embedded server at "+srv.ClientURL()
	}
	nc, err := nats.Connect(servers, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS (%s): %w", shown, err)
	}
	st.connected(orText(nc.ConnectedUrlRedacted(), shown))
	return nc, nil
}

// redactURLs hides any credential in the URLs (the config refuses them; a
// URL built elsewhere may still carry one).
func redactURLs(urls []string) []string {
	out := make([]string, len(urls))
	for i, s := range urls {
		u, err := url.Parse(s)
		if err != nil {
			out[i] = "(a URL that does not parse)"
			continue
		}
		if u.User != nil {
			u.User = url.User("REDACTED")
		}
		out[i] = u.String()
	}
	return out
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// natsLogger sends the embedded server's log lines to hclog.
type natsLogger struct{ log hclog.Logger }

func (l natsLogger) Noticef(f string, a ...any) { l.log.Debug(fmt.Sprintf(f, a...)) }
func (l natsLogger) Warnf(f string, a ...any)   { l.log.Warn(fmt.Sprintf(f, a...)) }
func (l natsLogger) Fatalf(f string, a ...any)  { l.log.Error(fmt.Sprintf(f, a...)) }
func (l natsLogger) Errorf(f string, a ...any)  { l.log.Error(fmt.Sprintf(f, a...)) }
func (l natsLogger) Debugf(f string, a ...any)  { l.log.Trace(fmt.Sprintf(f, a...)) }
func (l natsLogger) Tracef(f string, a ...any)  { l.log.Trace(fmt.Sprintf(f, a...)) }

var errNotFound = errors.New("not found")
