package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/config"
)

// TestEmbeddedServerSecured: an embedded server with TLS and credentials
// serves its own host (in process) and a client that brings the CA and the
// credentials, and refuses a client without credentials or without TLS.
func TestEmbeddedServerSecured(t *testing.T) {
	dir := t.TempDir()
	// The certificate is its own CA: the server, its clients and the routes'
	// mutual TLS all trust it.
	cert, key := apitest.WriteTLSFiles(t, dir)
	ca := cert
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
			addr := apitest.FreeAddr(t)
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
