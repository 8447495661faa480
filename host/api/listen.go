package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/zkhost/zkhost/sdk"
)

// DefaultSocketMode is the unix socket's mode when Config.SocketMode is 0: only the
// daemon's user may connect.
const DefaultSocketMode os.FileMode = 0o600

// MaxSocketPath is the longest unix socket path Linux accepts (sdk.MaxSocketPath);
// the config's checks use it too.
const MaxSocketPath = sdk.MaxSocketPath

// Config says where the daemon serves its API.
type Config struct {
	// Socket is the unix socket path; empty means DefaultSocketPath().
	Socket string
	// SocketMode is the socket's permission bits; 0 means DefaultSocketMode. Connecting
	// needs write permission, so 0o660 admits SocketGroup.
	SocketMode os.FileMode
	// SocketGroup (a name or a numeric gid) owns the socket; empty keeps the daemon's group.
	SocketGroup string
	// TCPAddr ("host:port") also serves the API on TCP; empty means unix socket only.
	// TCP requires all three of Credentials.
	TCPAddr string
	// Credentials are the TCP listener's; TokenFile's token is the admin's.
	Credentials
	// Clients are more TCP clients, each with its own token and identity.
	Clients []ClientConfig
	// MaxMessageBytes caps one message; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// StreamIdleTimeout is the longest a SubmitStream may go without a
	// message before it is ended and its memory released; 0 means
	// DefaultStreamIdleTimeout.
	StreamIdleTimeout time.Duration
}

// Credentials are the files a listener reachable from other machines serves
// with: the TLS certificate and key it presents, and the file holding the
// bearer token its clients must send. The API's TCP listener and the status
// page (host/web) use the same ones, so they are one type.
type Credentials struct {
	TLSCertFile string
	TLSKeyFile  string
	TokenFile   string
}

// IsLoopback reports whether a host:port names only this machine: the one
// place a listener may serve without Credentials.
func IsLoopback(addr string) bool {
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

// ClientConfig is a TCP client with a token of its own ([[client]] in the config).
type ClientConfig struct {
	Name      string
	TokenFile string
	Admin     bool
}

// Server serves a Service on a unix socket and, optionally, on TCP with TLS and a bearer
// token. The unix socket needs no token: its file mode and group say who may connect.
type Server struct {
	logger     hclog.Logger
	socketPath string
	unix       *grpc.Server
	unixLis    net.Listener
	tcp        *grpc.Server
	tcpLis     net.Listener
	stopOnce   sync.Once
}

// Listen opens the listeners cfg names and returns a Server ready to Serve. It refuses
// to start when another daemon answers on the socket, and removes a stale socket file
// (one nobody answers on) left by a daemon that died.
func Listen(cfg Config, svc Service, logger hclog.Logger) (*Server, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if svc == nil {
		return nil, errors.New("api: Listen needs a Service")
	}
	path := cfg.Socket
	if path == "" {
		var err error
		if path, err = DefaultSocketPath(); err != nil {
			return nil, err
		}
	}
	mode := cfg.SocketMode
	if mode == 0 {
		mode = DefaultSocketMode
	}
	var msgOpts []grpc.ServerOption
	if cfg.MaxMessageBytes < 0 {
		return nil, fmt.Errorf("api: max message bytes %d is negative", cfg.MaxMessageBytes)
	}
	idle := cfg.StreamIdleTimeout
	if idle < 0 {
		return nil, fmt.Errorf("api: stream idle timeout %v is negative", idle)
	}
	if idle == 0 {
		idle = DefaultStreamIdleTimeout
	}
	if cfg.MaxMessageBytes > 0 {
		msgOpts = append(msgOpts, grpc.MaxRecvMsgSize(cfg.MaxMessageBytes), grpc.MaxSendMsgSize(cfg.MaxMessageBytes))
	}

	// Check the TCP settings before touching the socket, so a bad config leaves no trace.
	var tcpOpts []grpc.ServerOption
	if cfg.TCPAddr != "" {
		var err error
		if tcpOpts, err = tcpServerOptions(cfg, logger); err != nil {
			return nil, err
		}
	} else if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" || cfg.TokenFile != "" {
		return nil, errors.New("api: TLS certificate, key or token file set without a TCP address")
	} else if len(cfg.Clients) > 0 {
		return nil, fmt.Errorf("api: %d [[client]] token(s) set without a TCP address: client tokens are for the TCP listener (set api.tcp_address, tls_cert, tls_key, token_file)", len(cfg.Clients))
	}

	s := &Server{logger: logger, socketPath: path}
	var err error
	if s.unixLis, err = ListenUnix(path, mode, cfg.SocketGroup); err != nil {
		return nil, err
	}
	s.unix = newGRPCServer(svc, logger.Named("unix"), idle, append(msgOpts, unixServerOptions()...)...)
	if cfg.TCPAddr != "" {
		if s.tcpLis, err = net.Listen("tcp", cfg.TCPAddr); err != nil {
			s.unixLis.Close()
			return nil, fmt.Errorf("api: listen on %s: %w", cfg.TCPAddr, err)
		}
		s.tcp = newGRPCServer(svc, logger.Named("tcp"), idle, append(msgOpts, tcpOpts...)...)
	}
	return s, nil
}

func tcpServerOptions(cfg Config, logger hclog.Logger) ([]grpc.ServerOption, error) {
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" || cfg.TokenFile == "" {
		return nil, fmt.Errorf("api: TCP address %s needs a TLS certificate, a TLS key and a token file (all three); plain TCP is not offered", cfg.TCPAddr)
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("api: TLS certificate %s / key %s: %w", cfg.TLSCertFile, cfg.TLSKeyFile, err)
	}
	token, err := ReadTokenFile(cfg.TokenFile, logger)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	tokens := []ClientToken{{Identity: Identity{Name: "admin", Admin: true}, Token: token}}
	for _, c := range cfg.Clients {
		tok, err := ReadTokenFile(c.TokenFile, logger)
		if err != nil {
			return nil, fmt.Errorf("api: client %s: %w", c.Name, err)
		}
		for _, o := range tokens {
			if compareTokens(tok, o.Token) {
				return nil, fmt.Errorf("api: client %s has the same token as %s; each client needs its own", c.Name, o.Identity.Name)
			}
		}
		tokens = append(tokens, ClientToken{Identity: Identity{Name: c.Name, Admin: c.Admin}, Token: tok})
	}
	unary, stream := IdentityInterceptors(tokens, logger.Named("auth"))
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	return []grpc.ServerOption{grpc.Creds(creds), grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}, nil
}

// SocketPath returns the unix socket the server listens on.
func (s *Server) SocketPath() string { return s.socketPath }

// TCPAddr returns the TCP address the server listens on, or nil.
func (s *Server) TCPAddr() net.Addr {
	if s.tcpLis == nil {
		return nil
	}
	return s.tcpLis.Addr()
}

// Serve serves until Stop and returns nil then; it returns the first listener's error
// otherwise (and stops the other listener).
func (s *Server) Serve() error {
	s.logger.Info("API listening", "socket", s.socketPath)
	if s.tcp != nil {
		s.logger.Info("API listening on TCP with TLS and a bearer token", "addr", s.tcpLis.Addr().String())
	}
	errc := make(chan error, 2)
	n := 1
	go func() { errc <- s.unix.Serve(s.unixLis) }()
	if s.tcp != nil {
		n++
		go func() { errc <- s.tcp.Serve(s.tcpLis) }()
	}
	var first error
	for i := 0; i < n; i++ {
		err := <-errc
		if first == nil && err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			first = err
			s.hardStop()
		}
	}
	return first
}

// Stop stops accepting calls, waits for calls in progress (Await streams included)
// until ctx ends, then cuts the rest, and removes the socket file.
func (s *Server) Stop(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.unix.GracefulStop()
		if s.tcp != nil {
			s.tcp.GracefulStop()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.hardStop()
		<-done
	}
	// Listeners close in Stop; close again in case Serve never ran.
	s.unixLis.Close()
	if s.tcpLis != nil {
		s.tcpLis.Close()
	}
}

func (s *Server) hardStop() {
	s.stopOnce.Do(func() {
		s.unix.Stop()
		if s.tcp != nil {
			s.tcp.Stop()
		}
	})
}

// ListenUnix listens on a unix socket at path with the given mode and optional group
// (name or gid). If a socket file is already there, it asks it: when a daemon answers,
// ListenUnix refuses to start; when none does, it removes the stale file. The socket is
// bound in a private directory, given its mode and group, then linked into place, so no
// one can connect through wider permissions in between, and a daemon starting at the
// same moment cannot be overwritten. Closing the listener removes the socket file, if it
// is still this listener's.
func ListenUnix(path string, mode os.FileMode, group string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("api: empty unix socket path")
	}
	if len(path) > MaxSocketPath {
		return nil, fmt.Errorf("api: unix socket path %s is %d bytes, longer than the %d the kernel accepts", path, len(path), MaxSocketPath)
	}
	if mode&^os.ModePerm != 0 {
		return nil, fmt.Errorf("api: socket mode %v has bits other than permissions", mode)
	}
	gid := -1
	if group != "" {
		var err error
		if gid, err = lookupGroup(group); err != nil {
			return nil, err
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("api: socket directory: %w", err)
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}

	tmpDir, err := os.MkdirTemp(dir, ".zkhost-sock-")
	if err != nil {
		return nil, fmt.Errorf("api: socket directory: %w", err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, "s")
	if len(tmp) > MaxSocketPath {
		// The private directory's name does not fit sun_path: bind in place, then set
		// the mode (a short window with the umask's permissions).
		tmp = path
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", path, err)
	}
	// This file decides when the socket file goes (see unixListener.Close).
	l.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		l.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fail(fmt.Errorf("api: chmod socket: %w", err))
	}
	if gid >= 0 {
		if err := os.Chown(tmp, -1, gid); err != nil {
			return fail(fmt.Errorf("api: give socket %s to group %s: %w", path, group, err))
		}
	}
	if tmp != path {
		// link, unlike rename, fails if the path exists: a daemon that started since the
		// stale check keeps its socket.
		if err := os.Link(tmp, path); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fail(fmt.Errorf("api: another zkhost daemon took %s while this one started", path))
			}
			return fail(fmt.Errorf("api: place socket at %s: %w", path, err))
		}
		os.Remove(tmp)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail(fmt.Errorf("api: stat socket: %w", err))
	}
	return &unixListener{UnixListener: l, path: path, info: fi}, nil
}

// removeStaleSocket removes a socket file at path that nobody answers on, and refuses
// when a daemon answers or when the path is not a socket.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("api: socket path: %w", err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("api: %s exists and is not a socket; refusing to replace it", path)
	}
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("api: another zkhost daemon is serving on %s; stop it first or choose another socket", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("api: socket %s exists and could not be probed: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("api: remove stale socket: %w", err)
	}
	return nil
}

func lookupGroup(group string) (int, error) {
	if gid, err := strconv.Atoi(group); err == nil {
		if gid < 0 {
			return 0, fmt.Errorf("api: socket group %q: negative gid", group)
		}
		return gid, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, fmt.Errorf("api: socket group %q: %w", group, err)
	}
	return strconv.Atoi(g.Gid)
}

// unixListener removes its socket file on Close, unless the file at the path is no
// longer this socket (another daemon replaced it after someone removed ours).
type unixListener struct {
	*net.UnixListener
	path string
	info os.FileInfo
	once sync.Once
	err  error
}

func (u *unixListener) Close() error {
	u.once.Do(func() {
		u.err = u.UnixListener.Close()
		if fi, err := os.Stat(u.path); err == nil && os.SameFile(fi, u.info) {
			os.Remove(u.path)
		}
	})
	return u.err
}
