package apitest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
)

// Serve serves svc with api.Listen on a fresh unix socket under a temporary directory,
// plus the TCP listener cfg asks for (cfg.Socket is set here), and stops it when the
// test ends. It returns the running server.
func Serve(t testing.TB, svc api.Service, cfg api.Config) *api.Server {
	t.Helper()
	cfg.Socket = filepath.Join(ShortTempDir(t), "zkhost.sock")
	srv, err := api.Listen(cfg, svc, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("api.Listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(ctx)
		if err := <-done; err != nil {
			t.Errorf("api.Server.Serve: %v", err)
		}
	})
	return srv
}

// ServeUntilStopped serves svc as Serve does, but leaves stopping the server
// to the test: for tests of what a stop does to the clients.
func ServeUntilStopped(t testing.TB, svc api.Service) *api.Server {
	t.Helper()
	srv, err := api.Listen(api.Config{Socket: filepath.Join(ShortTempDir(t), "zkhost.sock")}, svc, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("api.Listen: %v", err)
	}
	go srv.Serve()
	return srv
}

// ServeTCP is Serve with a TCP listener too, on a loopback port, over TLS
// with a self-signed certificate (WriteTLSFiles) and token as the admin's
// bearer token. It returns the server and the files a client needs: the
// certificate, which is its own CA, and the token file (the token and a
// newline, as an editor leaves it).
func ServeTCP(t testing.TB, svc api.Service, token string) (srv *api.Server, certFile, tokenFile string) {
	t.Helper()
	dir := ShortTempDir(t)
	certFile, keyFile := WriteTLSFiles(t, dir)
	tokenFile = filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv = Serve(t, svc, api.Config{TCPAddr: "127.0.0.1:0",
		Credentials: api.Credentials{TLSCertFile: certFile, TLSKeyFile: keyFile, TokenFile: tokenFile}})
	return srv, certFile, tokenFile
}

// ShortTempDir returns a temporary directory with a short path (unix socket paths are
// limited to 107 bytes, and t.TempDir embeds the test's name), removed when the test ends.
func ShortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zkh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// WaitFor polls cond every 20ms until it holds, failing t when timeout passes
// first; what names what it waits for, in the failure.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FreeAddr returns a loopback TCP address that was free when asked: for a
// listener a test configures (the API's TCP one, NATS servers), not a
// promise that no other process takes it first. Several addresses one test
// needs at once come from FreeAddrs: two calls here may return the same
// port, since the first is released before the second is asked.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return FreeAddrs(t, 1)[0]
}

// FreeAddrs returns n distinct loopback TCP addresses that were free when
// asked: each is held until all n are chosen, so none repeats (a NATS
// cluster's client and route ports, which must all differ).
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// StaleSocket leaves a unix socket file at path that nobody listens on, as a
// daemon that died leaves it.
func StaleSocket(t testing.TB, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
}

// WriteTLSFiles writes a self-signed certificate for 127.0.0.1 and localhost and its key
// into dir, for tests of TLS listeners (the API's TCP one, the cluster's NATS
// servers); the certificate is also its own CA, and serves a client of mutual
// TLS too.
func WriteTLSFiles(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zkhost test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
