package api_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

// otherUID is a user id that is neither root nor the test's own user: on the
// unix socket, a client that is not an admin.
func otherUID() int {
	uid := os.Geteuid() + 1000
	if uid == 0 {
		uid++
	}
	return uid
}

// unixClientAs serves svc on a unix socket whose every peer is uid, and returns
// a client of it.
func unixClientAs(t *testing.T, svc api.Service, uid int) zkhostv1.ZkhostClient {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(apitest.ShortTempDir(t), "zk.sock"))
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewGRPCServer(svc, nil, api.UnixServerOptionsAs(uid)...)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return zkhostv1.NewZkhostClient(conn)
}

// tcpClients serves svc on TCP with the admin's token, a client "alice"
// without admin and a client "ops" with it, and returns the server and a
// client per token.
func tcpClients(t *testing.T, svc api.Service) (*api.Server, map[string]zkhostv1.ZkhostClient) {
	t.Helper()
	dir := apitest.ShortTempDir(t)
	certFile, keyFile := apitest.WriteTLSFiles(t, dir)
	tokens := map[string]string{"admin": "admin-token-0123456789", "alice": "alice-token-0123456789", "ops": "ops-token-0123456789ab"}
	files := map[string]string{}
	for name, tok := range tokens {
		files[name] = filepath.Join(dir, name+".token")
		if err := os.WriteFile(files[name], []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := apitest.Serve(t, svc, api.Config{
		TCPAddr: "127.0.0.1:0", Credentials: api.Credentials{TLSCertFile: certFile, TLSKeyFile: keyFile, TokenFile: files["admin"]},
		Clients: []api.ClientConfig{{Name: "alice", TokenFile: files["alice"]}, {Name: "ops", TokenFile: files["ops"], Admin: true}},
	})
	pem, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	out := map[string]zkhostv1.ZkhostClient{}
	for name, tok := range tokens {
		conn, err := grpc.NewClient(srv.TCPAddr().String(), grpc.WithTransportCredentials(creds), grpc.WithPerRPCCredentials(tokenCall("Bearer "+tok)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		out[name] = zkhostv1.NewZkhostClient(conn)
	}
	return srv, out
}

// adminActions are the calls that change devices or keys for every client,
// each named as the refusal names it.
var adminActions = []struct {
	name string
	call func(context.Context, zkhostv1.ZkhostClient) error
}{
	{"preload (PreloadKey)", func(ctx context.Context, c zkhostv1.ZkhostClient) error {
		_, err := c.PreloadKey(ctx, &zkhostv1.KeyRequest{Circuit: "merkle", Device: "gpu1"})
		return err
	}},
	{"evict (EvictKey)", func(ctx context.Context, c zkhostv1.ZkhostClient) error {
		_, err := c.EvictKey(ctx, &zkhostv1.KeyRequest{Circuit: "merkle", Device: "gpu0"})
		return err
	}},
	{"enable (EnableDevice)", func(ctx context.Context, c zkhostv1.ZkhostClient) error {
		_, err := c.EnableDevice(ctx, &zkhostv1.EnableDeviceRequest{Device: "gpu1"})
		return err
	}},
}

// adminFake is a fake daemon whose gpu0 holds merkle's key and whose gpu1 is
// out of service, so an admin action that got through would show.
func adminFake(t *testing.T) *apitest.Fake {
	t.Helper()
	fake := apitest.NewFake("gpu0", "gpu1")
	if _, err := fake.PreloadKey(context.Background(), "merkle", "gpu0"); err != nil {
		t.Fatal(err)
	}
	fake.Report.Devices[1].Healthy = false
	fake.Report.Devices[1].Error = "unhealthy: 3 crashes within the window"
	return fake
}

// untouched fails t when an admin action changed fake.
func untouched(t *testing.T, fake *apitest.Fake) {
	t.Helper()
	st, _ := fake.Status(context.Background())
	if !slices.Equal(st.Devices[0].KeysResident, []string{"merkle"}) || len(st.Devices[1].KeysResident) != 0 || st.Devices[1].Healthy {
		t.Errorf("a refused admin action changed the daemon: %+v", st.Devices)
	}
}

// TestAdminActionsNeedAdmin: preload, evict and enable are refused with
// PermissionDenied, naming the action and that it needs the admin identity,
// to a TCP client without admin and to a unix-socket peer of another user,
// and change nothing; the admin's token, a client with admin = true and the
// daemon's own user on the socket may take them.
func TestAdminActionsNeedAdmin(t *testing.T) {
	ctx := testCtx(t)
	for _, a := range adminActions {
		t.Run(a.name, func(t *testing.T) {
			fake := adminFake(t)
			_, tcp := tcpClients(t, fake)
			for _, who := range []struct {
				name   string
				client zkhostv1.ZkhostClient
				ident  string
			}{
				{"token of a client without admin", tcp["alice"], `client "alice"`},
				{"unix peer of another user", unixClientAs(t, fake, otherUID()), `client "uid:`},
			} {
				err := a.call(ctx, who.client)
				st := status.Convert(err)
				if st.Code() != codes.PermissionDenied {
					t.Errorf("%s: %v, want PermissionDenied", who.name, err)
					continue
				}
				for _, want := range []string{a.name, "needs the admin identity", who.ident, "is not an admin"} {
					if !strings.Contains(st.Message(), want) {
						t.Errorf("%s: the refusal %q does not say %q", who.name, st.Message(), want)
					}
				}
				if d := detailOf(err); d == nil || d.GetKind() != "permission_denied" {
					t.Errorf("%s: detail %v, want kind permission_denied", who.name, d)
				}
			}
			untouched(t, fake)
			for _, who := range []struct {
				name   string
				client zkhostv1.ZkhostClient
			}{
				{"the admin's token", tcp["admin"]},
				{"token of a client with admin = true", tcp["ops"]},
				{"unix peer of the daemon's own user", unixClientAs(t, fake, os.Geteuid())},
			} {
				if err := a.call(ctx, who.client); err != nil {
					t.Errorf("%s: %v, want it allowed", who.name, err)
				}
			}
		})
	}
}
