package api_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

// identityRecorder is the fake service, telling which identity each Status
// call arrived with.
type identityRecorder struct {
	*apitest.Fake
	got chan api.Identity
}

func (r *identityRecorder) Status(ctx context.Context) (api.StatusReport, error) {
	r.got <- api.IdentityFrom(ctx)
	return r.Fake.Status(ctx)
}

// TestIdentities: each TCP token gives its client's identity, the [api]
// token_file the admin's, and the unix socket its peer's uid (the daemon's own
// user is an admin).
func TestIdentities(t *testing.T) {
	rec := &identityRecorder{Fake: apitest.NewFake("gpu0"), got: make(chan api.Identity, 1)}
	srv, clients := tcpClients(t, rec)
	ctx := testCtx(t)
	for _, tc := range []struct {
		client string
		want   api.Identity
	}{
		{"admin", api.Identity{Name: "admin", Admin: true}},
		{"alice", api.Identity{Name: "alice"}},
		{"ops", api.Identity{Name: "ops", Admin: true}},
	} {
		if _, err := clients[tc.client].Status(ctx, &zkhostv1.StatusRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := <-rec.got; got != tc.want {
			t.Errorf("token of %s: identity %+v, want %+v", tc.want.Name, got, tc.want)
		}
	}
	conn, err := grpc.NewClient("unix://"+srv.SocketPath(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := zkhostv1.NewZkhostClient(conn).Status(ctx, &zkhostv1.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
	if got, want := <-rec.got, api.UnixIdentity(os.Geteuid()); got != want || !got.Admin {
		t.Errorf("unix socket peer: %+v, want %+v (the daemon's own user, an admin)", got, want)
	}
}

func TestClientTokensRefused(t *testing.T) {
	dir := apitest.ShortTempDir(t)
	certFile, keyFile := apitest.WriteTLSFiles(t, dir)
	tok := filepath.Join(dir, "t")
	os.WriteFile(tok, []byte("the-same-token-0123456789"), 0o600)
	for _, tc := range []struct {
		name string
		cfg  api.Config
		want string
	}{
		{"shared token", api.Config{TCPAddr: "127.0.0.1:0", Credentials: api.Credentials{TLSCertFile: certFile, TLSKeyFile: keyFile, TokenFile: tok},
			Clients: []api.ClientConfig{{Name: "alice", TokenFile: tok}}}, "client alice has the same token as admin"},
		{"clients without tcp", api.Config{Clients: []api.ClientConfig{{Name: "alice", TokenFile: tok}}}, "without a TCP address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Socket = filepath.Join(apitest.ShortTempDir(t), "zk.sock")
			srv, err := api.Listen(tc.cfg, apitest.NewFake(), nil)
			if err == nil {
				srv.Stop(context.Background())
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Listen: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
