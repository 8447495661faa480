package cluster

import (
	"context"
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
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
)

// startServer runs the embedded NATS server of [cluster] embedded = true and
// waits until it takes connections.
func startServer(cc *config.Cluster, log hclog.Logger) (*server.Server, error) {
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
	user, pass, nkeyPub, err := credentials(cc)
	if err != nil {
		return nil, err
	}
	switch {
	case user != "":
		opts.Username, opts.Password = user, pass
	case nkeyPub != "":
		opts.Nkeys = []*server.NkeyUser{{Nkey: nkeyPub}}
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

func splitHostPort(addr string) (string, int, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return h, n, err
}

// credentials reads the user and password, or the nkey seed's public key.
func credentials(cc *config.Cluster) (user, pass, nkeyPub string, err error) {
	if cc.PasswordFile != "" {
		b, err := os.ReadFile(cc.PasswordFile)
		if err != nil {
			return "", "", "", fmt.Errorf("cluster.password_file: %w", err)
		}
		pass = strings.TrimSpace(string(b))
		if pass == "" {
			return "", "", "", fmt.Errorf("cluster.password_file: %s is empty", cc.PasswordFile)
		}
		return cc.User, pass, "", nil
	}
	if cc.NkeySeedFile != "" {
		b, err := os.ReadFile(cc.NkeySeedFile)
		if err != nil {
			return "", "", "", fmt.Errorf("cluster.nkey_seed_file: %w", err)
		}
		kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
		if err != nil {
			return "", "", "", fmt.Errorf("cluster.nkey_seed_file: %s: %w", cc.NkeySeedFile, err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return "", "", "", fmt.Errorf("cluster.nkey_seed_file: %w", err)
		}
		return "", "", pub, nil
	}
	return "", "", "", nil
}

// connect opens the host's NATS connection: to its embedded server in process
// when it has one and no URLs, else to the URLs.
func connect(cc *config.Cluster, srv *server.Server, log hclog.Logger) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("zkhost " + cc.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS connection lost; reconnecting", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("NATS reconnected", "server", nc.ConnectedUrlRedacted()) }),
	}
	if cc.PasswordFile != "" {
		user, pass, _, err := credentials(cc)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(user, pass))
	}
	if cc.NkeySeedFile != "" {
		o, err := nats.NkeyOptionFromSeed(cc.NkeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("cluster.nkey_seed_file: %w", err)
		}
		opts = append(opts, o)
	}
	if cc.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cc.TLSCA))
	}
	if cc.TLSCert != "" && !cc.Embedded {
		opts = append(opts, nats.ClientCert(cc.TLSCert, cc.TLSKey))
	}
	servers := strings.Join(cc.URLs, ",")
	if srv != nil && len(cc.URLs) == 0 {
		opts = append(opts, nats.InProcessServer(srv))
		servers = ""
	}
	nc, err := nats.Connect(servers, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS (%s): %w", orText(servers, "embedded server"), err)
	}
	return nc, nil
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// jsHandles are what setup creates or finds.
type jsHandles struct {
	stream jetstream.Stream
	cons   [4]jetstream.Consumer
	kv     jetstream.KeyValue
	inputs jetstream.ObjectStore
}

// setup creates (or finds) the stream, its consumers and the buckets,
// retrying while JetStream has no leader yet: servers of a cluster starting
// together elect one only once a majority is up.
func setup(ctx context.Context, js jetstream.JetStream, cc *config.Cluster, retention time.Duration, log hclog.Logger) (jsHandles, error) {
	var h jsHandles
	try := func() error {
		// A request sent before a leader is elected gets no answer: each try
		// has its own deadline.
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var err error
		h.stream, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        streamName,
			Description: "zkhost partitions waiting for a host",
			Subjects:    []string{subjectPrefix + ">"},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			Replicas:    cc.Replicas,
			Duplicates:  2 * time.Minute,
		})
		if err != nil {
			return fmt.Errorf("stream %s: %w", streamName, err)
		}
		for i, class := range api.Classes {
			c, err := js.CreateOrUpdateConsumer(ctx, streamName, jetstream.ConsumerConfig{
				Durable:       consumerName(class),
				FilterSubject: subjectPrefix + class.String() + ".>",
				AckPolicy:     jetstream.AckExplicitPolicy,
				AckWait:       cc.AckWait,
				// Each host bounds what it holds (Pull); this bounds the whole cluster.
				MaxAckPending: 1 << 16,
				Replicas:      cc.Replicas,
			})
			if err != nil {
				return fmt.Errorf("consumer %s: %w", consumerName(class), err)
			}
			h.cons[i] = c
		}
		kvc := jetstream.KeyValueConfig{
			Bucket:      bucketName,
			Description: "zkhost jobs and their proofs",
			Storage:     jetstream.FileStorage,
			Replicas:    cc.Replicas,
			History:     1,
			TTL:         retention,
		}
		h.kv, err = js.CreateOrUpdateKeyValue(ctx, kvc)
		if err != nil {
			return fmt.Errorf("bucket %s: %w", bucketName, err)
		}
		h.inputs, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      inputsBucket,
			Description: "zkhost partition inputs too large for a message",
			Storage:     jetstream.FileStorage,
			Replicas:    cc.Replicas,
			TTL:         retention,
		})
		if err != nil {
			return fmt.Errorf("object store %s: %w", inputsBucket, err)
		}
		return nil
	}
	for {
		err := try()
		if err == nil {
			return h, nil
		}
		if ctx.Err() != nil {
			return jsHandles{}, fmt.Errorf("JetStream not ready: %w (are a majority of the NATS servers up, with JetStream enabled?)", err)
		}
		log.Info("waiting for JetStream", "reason", err)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
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
