package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
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
	// Credentials are the API's ([api] tls_cert, tls_key, token_file). With
	// TokenFile set the data endpoints require its bearer token, and
	// TLSCertFile and TLSKeyFile must be set too, so the token never crosses
	// the network in clear text.
	api.Credentials
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
		// The same rule as the gRPC listener: off this machine, TLS and a token
		// or nothing. The page and /metrics show jobs, devices and load.
		if !api.IsLoopback(cfg.Address) {
			return nil, fmt.Errorf("web: %s is not a loopback address, and the status page and /metrics are served there only over TLS with a bearer token: "+
				"bind web_address to 127.0.0.1, or set [api] tcp_address, tls_cert, tls_key and token_file (the page uses the same)", cfg.Address)
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

// RequireToken wraps h so that every path, the page itself included, needs the
// token: as "Authorization: Bearer <token>" (scripts, Prometheus), or as the
// session cookie a browser gets by posting the token to /login. A browser
// asking for the page without either gets a login form and nothing else. The
// comparisons are constant-time over SHA-256 digests; a refusal is logged with
// the path and the peer, never with what the peer sent.
func RequireToken(h http.Handler, token []byte, log hclog.Logger) http.Handler {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	want := sha256.Sum256(token)
	session := sessionValue(token)
	wantSession := sha256.Sum256([]byte(session))
	valid := func(got string, want [32]byte) bool {
		d := sha256.Sum256([]byte(got))
		return subtle.ConstantTimeCompare(d[:], want[:]) == 1
	}
	authorized := func(r *http.Request) bool {
		if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "bearer") && valid(strings.TrimSpace(tok), want) {
			return true
		}
		c, err := r.Cookie(sessionCookie)
		return err == nil && valid(c.Value, wantSession)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			if r.Method != http.MethodPost {
				w.Header().Set("Allow", http.MethodPost)
				http.Error(w, "post the token", http.StatusMethodNotAllowed)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, 4096)
			if !valid(strings.TrimSpace(r.PostFormValue("token")), want) {
				log.Warn("refused web login", "peer", r.RemoteAddr)
				writeLogin(w, http.StatusUnauthorized, "That token is not the daemon's.")
				return
			}
			http.SetCookie(w, &http.Cookie{
				Name: sessionCookie, Value: session, Path: "/",
				HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode,
			})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		if authorized(r) {
			h.ServeHTTP(w, r)
			return
		}
		log.Warn("refused web request", "path", r.URL.Path, "peer", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="zkhost"`)
		if r.URL.Path == "/" {
			writeLogin(w, http.StatusUnauthorized, "")
			return
		}
		http.Error(w, "missing or invalid bearer token", http.StatusUnauthorized)
	})
}

// sessionCookie names the cookie a browser holds after /login.
const sessionCookie = "zkhost_session"

// sessionValue is the session cookie's value for token: a digest of it, so the
// cookie is not the token (a browser that leaks its cookies does not leak the
// token the gRPC API takes), and the same for every session, so a daemon keeps
// no session state; changing the token ends every session.
func sessionValue(token []byte) string {
	mac := hmac.New(sha256.New, token)
	mac.Write([]byte("zkhost web session v1"))
	return hex.EncodeToString(mac.Sum(nil))
}

// loginPage is what a browser without the token gets instead of the page: a
// form that posts the token to /login, and nothing about the daemon.
const loginPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>zkhost: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; margin: 3em">
<h1>zkhost</h1>
<p>This status page needs the daemon's bearer token (the file [api] token_file names).</p>
%s
<form id="login" method="post" action="/login">
<input name="token" type="password" autocomplete="current-password" size="48" autofocus required>
<button type="submit">Sign in</button>
</form>
</body></html>
`

func writeLogin(w http.ResponseWriter, code int, problem string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	msg := ""
	if problem != "" {
		msg = `<p id="problem" style="color: #b00">` + html.EscapeString(problem) + `</p>`
	}
	fmt.Fprintf(w, loginPage, msg)
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
