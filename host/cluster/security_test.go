package cluster

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
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/zkhost/zkhost/host/config"
)

// writeCert writes a CA and a server certificate for 127.0.0.1 signed by it,
// and returns the paths of the CA, the certificate and its key.
func writeCert(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for path, block := range map[string]*pem.Block{ca: {Type: "CERTIFICATE", Bytes: caDER}, cert: {Type: "CERTIFICATE", Bytes: srvDER}, key: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

// TestEmbeddedServerSecured: an embedded server with TLS and credentials
// serves its own host (in process) and a client that brings the CA and the
// credentials, and refuses a client without credentials or without TLS.
func TestEmbeddedServerSecured(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := writeCert(t, dir)
	seed, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seedBytes, _ := seed.Seed()
	seedFile := filepath.Join(dir, "user.nk")
	if err := os.WriteFile(seedFile, seedBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(dir, "password")
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nkeyOpt, err := nats.NkeyOptionFromSeed(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cc   config.Cluster
		opts []nats.Option // a client that must get in
	}{
		{"password", config.Cluster{User: "zk", PasswordFile: pwFile}, []nats.Option{nats.UserInfo("zk", "s3cret")}},
		{"nkey", config.Cluster{NkeySeedFile: seedFile}, []nats.Option{nkeyOpt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := freeAddr(t)
			cc := tc.cc
			cc.Name, cc.Embedded, cc.Listen, cc.StoreDir, cc.Replicas = "h0", true, addr, t.TempDir(), 1
			cc.TLSCA, cc.TLSCert, cc.TLSKey = ca, cert, key
			cc.AckWait, cc.MaxDeliver = 5*time.Second, 3
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := Start(ctx, &config.Config{Cluster: &cc, Journal: config.Journal{Retention: time.Hour}}, nil, nil)
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			defer c.Close()
			if _, _, err := c.getJob(ctx, "0123"); err != errNotFound {
				t.Errorf("the host's own connection cannot read the bucket: %v", err)
			}
			url := "tls://" + addr
			good, err := nats.Connect(url, append(tc.opts, nats.RootCAs(ca))...)
			if err != nil {
				t.Fatalf("a client with the CA and credentials: %v", err)
			}
			good.Close()
			if nc, err := nats.Connect(url, nats.RootCAs(ca)); err == nil {
				nc.Close()
				t.Error("a client without credentials got in")
			} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
				t.Errorf("a client without credentials: %v, want an authorization error", err)
			}
			if nc, err := nats.Connect("nats://"+addr, tc.opts...); err == nil {
				nc.Close()
				t.Error("a client without TLS got in")
			}
		})
	}
}
