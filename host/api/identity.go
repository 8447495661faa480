package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Identity is who makes an API call. Jobs belong to the identity that
// submitted them: a client lists, reads, awaits and cancels only its own jobs,
// and its queued partitions count against its own limit. An admin sees and
// acts on every job, and only an admin may take the actions that change
// devices or keys for every client (PreloadKey, EvictKey, EnableDevice: the
// gRPC layer refuses them to others with ErrPermissionDenied).
type Identity struct {
	// Name is the client's name: a [[client]] name for a TCP token, "uid:N"
	// for a unix-socket peer, "admin" for the [api] token_file.
	Name  string
	Admin bool
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity ctx carries. A call without one comes from
// inside the daemon's process (tests, the one-shot prover), which is trusted as
// an admin.
func IdentityFrom(ctx context.Context) Identity {
	if id, ok := ctx.Value(identityKey{}).(Identity); ok {
		return id
	}
	return Identity{Name: "", Admin: true}
}

// requireAdmin refuses action, an admin action, to a caller of ctx that is not
// an admin. Admin actions (preload, evict, enable) change devices or keys for
// every client, so one tenant must not take a key or a device from the others
// or put back a device an operator left out of service. action names the CLI
// command and the RPC, so either kind of caller recognises its call.
func requireAdmin(ctx context.Context, action string) error {
	id := IdentityFrom(ctx)
	if id.Admin {
		return nil
	}
	return &Error{Kind: ErrPermissionDenied, Message: fmt.Sprintf(
		"%s changes devices or keys for every client and needs the admin identity; client %q is not an admin "+
			"(admins: the [api] token_file's token, a [[client]] with admin = true, or on the unix socket the daemon's own user or root)",
		action, id.Name)}
}

// ClientToken is one client's bearer token for the TCP listener.
type ClientToken struct {
	Identity Identity
	Token    []byte
}

// IdentityInterceptors admit a call whose "authorization" metadata is "Bearer
// <token>" for one of tokens, and give the call that token's identity. The
// comparisons are constant-time over SHA-256 digests and every token is
// compared, so neither which token matched nor their lengths leak through
// timing. A refusal is logged with the method and the peer's address, never
// with what the peer sent.
func IdentityInterceptors(tokens []ClientToken, logger hclog.Logger) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	digests := make([][32]byte, len(tokens))
	for i, t := range tokens {
		digests[i] = sha256.Sum256(t.Token)
	}
	identify := func(ctx context.Context, method string) (context.Context, error) {
		match := -1
		reason := "wrong token"
		for i, d := range digests {
			r := checkBearer(ctx, d)
			if r == "" {
				match = i
			} else if r != "wrong token" {
				reason = r
			}
		}
		if match >= 0 {
			return WithIdentity(ctx, tokens[match].Identity), nil
		}
		addr := "unknown"
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			addr = p.Addr.String()
		}
		logger.Warn("refused API call", "method", method, "peer", addr, "reason", reason)
		return nil, ToStatus(&Error{Kind: ErrUnauthenticated, Message: "missing or invalid bearer token"})
	}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, err := identify(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, err := identify(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		return handler(srv, &identifiedStream{ServerStream: ss, ctx: ctx})
	}
	return unary, stream
}

type identifiedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identifiedStream) Context() context.Context { return s.ctx }

// PeerCred is the AuthInfo of a unix-socket connection: the connecting
// process's user, as the kernel reports it (SO_PEERCRED), which a client cannot
// forge.
type PeerCred struct {
	credentials.CommonAuthInfo
	UID int
}

// AuthType implements credentials.AuthInfo.
func (PeerCred) AuthType() string { return "peercred" }

// peerCredentials reads the peer's credentials of each unix-socket connection.
// It adds no encryption: the socket never leaves the machine.
type peerCredentials struct{}

func (peerCredentials) ClientHandshake(ctx context.Context, _ string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return conn, nil, errors.New("peer credentials are for the server side")
}

func (peerCredentials) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil, nil, fmt.Errorf("peer credentials: %T is not a unix socket", conn)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) { cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return nil, nil, err
	}
	if serr != nil {
		return nil, nil, fmt.Errorf("peer credentials: %w", serr)
	}
	return conn, PeerCred{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}, UID: int(cred.Uid)}, nil
}

func (peerCredentials) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}
func (c peerCredentials) Clone() credentials.TransportCredentials { return c }
func (peerCredentials) OverrideServerName(string) error           { return nil }

// UnixIdentity returns the identity of a unix-socket peer of uid: the
// daemon's own user and root are admins, any other user (admitted by the
// socket's mode and group) a client named "uid:N".
func UnixIdentity(uid int) Identity {
	return Identity{Name: "uid:" + strconv.Itoa(uid), Admin: uid == os.Geteuid() || uid == 0}
}

// peerInterceptors give each unix-socket call its peer's identity.
func peerInterceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	identify := func(ctx context.Context) (context.Context, error) {
		p, ok := peer.FromContext(ctx)
		if !ok {
			return nil, ToStatus(&Error{Kind: ErrUnauthenticated, Message: "no peer credentials on the unix socket"})
		}
		pc, ok := p.AuthInfo.(PeerCred)
		if !ok {
			return nil, ToStatus(&Error{Kind: ErrUnauthenticated, Message: "no peer credentials on the unix socket"})
		}
		return WithIdentity(ctx, UnixIdentity(pc.UID)), nil
	}
	unary := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		ctx, err := identify(ctx)
		if err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		ctx, err := identify(ss.Context())
		if err != nil {
			return err
		}
		return handler(srv, &identifiedStream{ServerStream: ss, ctx: ctx})
	}
	return unary, stream
}

// unixServerOptions are the options of the unix-socket server: peer
// credentials and the identity they give.
func unixServerOptions() []grpc.ServerOption {
	unary, stream := peerInterceptors()
	return []grpc.ServerOption{grpc.Creds(peerCredentials{}), grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

// compareTokens reports whether two tokens are equal, in constant time.
func compareTokens(a, b []byte) bool {
	da, db := sha256.Sum256(a), sha256.Sum256(b)
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}
