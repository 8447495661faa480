package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// MinTokenBytes is the shortest bearer token accepted: a token guards a TCP port, so it
// must not be guessable (`openssl rand -hex 32` makes a good one).
const MinTokenBytes = 16

// ReadTokenFile reads a bearer token from path: the file's contents with surrounding
// white space trimmed. It refuses a token shorter than MinTokenBytes or with anything
// but printable ASCII in it (a line break inside, a control byte), and warns (through
// logger, which may be nil) when the file is readable by others than its owner.
func ReadTokenFile(path string, logger hclog.Logger) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	tok := []byte(strings.TrimSpace(string(b)))
	// A token travels in a gRPC header, which carries printable ASCII only: a
	// token with a line break (two tokens, or a pasted wrap) would pass here
	// and fail every call with an Internal error.
	for i, c := range tok {
		if c == '\n' || c == '\r' {
			return nil, fmt.Errorf("token file %s: the token has a line break inside it (after byte %d): a token is one line of printable ASCII",
				path, i)
		}
		if c < 0x20 || c > 0x7e {
			return nil, fmt.Errorf("token file %s: byte %d of the token is 0x%02x: a token is one line of printable ASCII (e.g. `openssl rand -hex 32 > %s`)",
				path, i, c, path)
		}
	}
	if len(tok) < MinTokenBytes {
		return nil, fmt.Errorf("token file %s: the token is %d bytes, use at least %d (e.g. `openssl rand -hex 32 > %s`)",
			path, len(tok), MinTokenBytes, path)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 && logger != nil {
		logger.Warn("token file is readable by group or others; chmod 600 it", "path", path, "mode", fi.Mode().Perm().String())
	}
	return tok, nil
}

// TokenInterceptors returns interceptors that admit a call only when its "authorization"
// metadata is "Bearer <token>", as the admin (IdentityInterceptors with one token).
func TokenInterceptors(token []byte, logger hclog.Logger) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	return IdentityInterceptors([]ClientToken{{Identity: Identity{Name: "admin", Admin: true}, Token: token}}, logger)
}

// checkBearer returns why the call's credentials are refused, or "" when they match.
func checkBearer(ctx context.Context, want [32]byte) string {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	switch {
	case len(vals) == 0:
		return "no authorization metadata"
	case len(vals) > 1:
		return "more than one authorization value"
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "authorization is not a bearer token"
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return "wrong token"
	}
	return ""
}
