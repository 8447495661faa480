package api

import (
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// UnixServerOptionsAs returns the unix socket's server options with the
// kernel's peer credentials replaced by uid, so a test can play a peer of
// another user without the privileges to become one. Everything after the
// handshake (the interceptors, UnixIdentity) is the real path.
func UnixServerOptionsAs(uid int) []grpc.ServerOption {
	unary, stream := peerInterceptors()
	return []grpc.ServerOption{grpc.Creds(peerAs{uid: uid}), grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

// peerAs is peerCredentials that report uid for every connection.
type peerAs struct {
	peerCredentials
	uid int
}

func (p peerAs) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return conn, PeerCred{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}, UID: p.uid}, nil
}

func (p peerAs) Clone() credentials.TransportCredentials { return p }
