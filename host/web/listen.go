package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/metrics"
)

// Config says where and how the web server listens.
type Config struct {
	// Address is the host:port to listen on.
	Address string
	// TokenFile, when set, holds the bearer token the data endpoints require
	// (the API's [api] token_file); TLSCertFile and TLSKeyFile must then be
	// set too, so the token never crosses the network in clear text.
	TokenFile   string
	TLSCertFile string
	TLSKeyFile  string
}

// Server is a running web server.
type Server struct {
	srv  *http.Server
	lis  net.Listener
	tls  bool
	log  hclog.Logger
	done chan error
}

// Listen opens cfg.Address and serves h there in the background: over HTTPS
// with a bearer token when cfg.TokenFile is set, plain HTTP otherwise. A bad
// config is an error naming what is wrong; nothing is left listening then.
func Listen(cfg Config, h http.Handler, log hclog.Logger) (*Server, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if cfg.Address == "" {
		return nil, errors.New("web: no address")
	}
	var tlsConf *tls.Config
	switch {
	case cfg.TokenFile != "":
		if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
			return nil, errors.New("web: a bearer token needs a TLS certificate and key, so that it never crosses the network in clear text")
		}
		token, err := api.ReadTokenFile(cfg.TokenFile, log)
		if err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("web: TLS certificate %s / key %s: %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		h = RequireToken(h, token, log)
	case cfg.TLSCertFile != "" || cfg.TLSKeyFile != "":
		return nil, errors.New("web: TLS certificate or key set without a token file")
	default:
		if !isLoopback(cfg.Address) {
			log.Warn("the status page and /metrics are served without authentication on a non-loopback address; "+
				"bind web_address to 127.0.0.1, or set [api] tcp_address with its TLS certificate and token", "address", cfg.Address)
		}
	}
	lis, err := net.Listen("tcp", cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("web: listen on %s: %w", cfg.Address, err)
	}
	s := &Server{
		srv: &http.Server{
			Handler: h, TLSConfig: tlsConf,
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute,
			ErrorLog: log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true, ForceLevel: hclog.Debug}),
		},
		lis: lis, tls: tlsConf != nil, log: log, done: make(chan error, 1),
	}
	go func() {
		var err error
		if s.tls {
			err = s.srv.ServeTLS(lis, "", "")
		} else {
			err = s.srv.Serve(lis)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	log.Info("status page listening", "url", s.URL(), "token", cfg.TokenFile != "")
	return s, nil
}

// Addr returns the address the server listens on.
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// URL returns the status page's URL.
func (s *Server) URL() string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return scheme + "://" + s.lis.Addr().String() + "/"
}

// Close stops the server, letting requests in progress finish until ctx ends,
// and returns the error serving ended with, if any.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	if serr := <-s.done; serr != nil {
		return serr
	}
	return err
}

// RequireToken wraps h so that every path but the page itself ("/", which
// holds no data) needs "Authorization: Bearer <token>". The comparison is
// constant-time over SHA-256 digests; a refusal is logged with the path and the
// peer, never with what the peer sent.
func RequireToken(h http.Handler, token []byte, log hclog.Logger) http.Handler {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	want := sha256.Sum256(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			h.ServeHTTP(w, r)
			return
		}
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		if !ok || !strings.EqualFold(scheme, "bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			log.Warn("refused web request", "path", r.URL.Path, "peer", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="zkhost"`)
			http.Error(w, "missing or invalid bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// isLoopback reports whether a host:port names only this machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Start serves svc's status page and Prometheus metrics (host/metrics: the
// service's own Metrics when it is a MetricsProvider, a StatusCollector over it,
// the Go and process collectors) per cfg. It is what `zkhost serve` calls when
// [api] web_address is set.
func Start(cfg Config, svc api.Service, log hclog.Logger) (*Server, error) {
	var m *metrics.Metrics
	if mp, ok := svc.(MetricsProvider); ok {
		m = mp.Metrics()
	}
	reg, err := metrics.NewRegistry(m, svc)
	if err != nil {
		return nil, err
	}
	return Listen(cfg, Handler(svc, reg), log)
}
