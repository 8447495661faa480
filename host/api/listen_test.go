package api_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	zkhostv1 "github.com/zkhost/zkhost/internal/proto/zkhostv1"
)

func TestSocketMode(t *testing.T) {
	for _, mode := range []os.FileMode{0, 0o600, 0o660} {
		t.Run(mode.String(), func(t *testing.T) {
			srv := apitest.Serve(t, apitest.NewFake(), api.Config{SocketMode: mode})
			fi, err := os.Stat(srv.SocketPath())
			if err != nil {
				t.Fatal(err)
			}
			want := mode
			if want == 0 {
				want = api.DefaultSocketMode
			}
			if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != want {
				t.Errorf("socket mode = %v, want socket %v", fi.Mode(), want)
			}
			// Nothing else is left beside it (the private bind directory is gone).
			entries, _ := os.ReadDir(filepath.Dir(srv.SocketPath()))
			if len(entries) != 1 {
				t.Errorf("socket directory holds %d entries, want 1", len(entries))
			}
		})
	}
}

func TestSocketGroup(t *testing.T) {
	gid := os.Getgid()
	l, err := api.ListenUnix(filepath.Join(apitest.ShortTempDir(t), "s.sock"), 0o660, strconv.Itoa(gid))
	if err != nil {
		t.Fatalf("ListenUnix with own gid: %v", err)
	}
	defer l.Close()
	if _, err := api.ListenUnix(filepath.Join(apitest.ShortTempDir(t), "s.sock"), 0o660, "no-such-group-zkhost"); err == nil ||
		!strings.Contains(err.Error(), "no-such-group-zkhost") {
		t.Errorf("unknown group: %v", err)
	}
}

func TestListenUnixStaleAndLive(t *testing.T) {
	dir := apitest.ShortTempDir(t)
	path := filepath.Join(dir, "zkhost.sock")

	// A stale socket: bound, then its process "died" without removing the file.
	apitest.StaleSocket(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("stale socket file missing: %v", err)
	}
	l, err := api.ListenUnix(path, 0o600, "")
	if err != nil {
		t.Fatalf("ListenUnix over a stale socket: %v", err)
	}

	// A live one: a second daemon must refuse and leave the first one's socket alone.
	if _, err := api.ListenUnix(path, 0o600, ""); err == nil || !strings.Contains(err.Error(), "another zkhost daemon is serving") {
		t.Fatalf("second ListenUnix = %v, want a refusal", err)
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the first daemon's socket is gone: %v", err)
	}
	conn.Close()

	// Closing removes the socket file.
	l.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket file after Close: %v", err)
	}
}

func TestListenUnixRefuses(t *testing.T) {
	dir := apitest.ShortTempDir(t)
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		mode       os.FileMode
		want       string
	}{
		{"not a socket", regular, 0o600, "is not a socket"},
		{"too long", "/tmp/" + strings.Repeat("x", 120) + ".sock", 0o600, "longer than"},
		{"empty", "", 0o600, "empty unix socket path"},
		{"setuid mode", filepath.Join(dir, "a.sock"), os.ModeSetuid | 0o600, "bits other than permissions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := api.ListenUnix(tt.path, tt.mode, "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ListenUnix = %v, want %q", err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(regular); string(b) != "x" {
		t.Error("the regular file was touched")
	}
}

func TestStopRemovesSocket(t *testing.T) {
	path := filepath.Join(apitest.ShortTempDir(t), "zkhost.sock")
	srv, err := api.Listen(api.Config{Socket: path}, apitest.NewFake(), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := zkhostv1.NewZkhostClient(conn).Status(context.Background(), &zkhostv1.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Stop(ctx)
	if err := <-done; err != nil {
		t.Errorf("Serve after Stop = %v, want nil", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket file after Stop: %v", err)
	}
}

func TestStopCutsOpenAwait(t *testing.T) {
	srv := apitest.ServeUntilStopped(t, apitest.NewFake())
	conn, err := grpc.NewClient("unix://"+srv.SocketPath(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := zkhostv1.NewZkhostClient(conn)
	ctx := testCtx(t)
	job, err := c.Submit(ctx, &zkhostv1.SubmitRequest{Circuit: "c", Witnesses: [][]byte{{1}}})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Await(ctx, &zkhostv1.AwaitRequest{JobId: job.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	// The job never ends, so a graceful stop waits; Stop must give up at its deadline.
	stopCtx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	srv.Stop(stopCtx)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Stop took %v with an open Await", d)
	}
	if _, err := stream.Recv(); err == nil {
		t.Error("the Await stream survived Stop")
	}
}

func TestTCPNeedsTLSAndToken(t *testing.T) {
	dir := apitest.ShortTempDir(t)
	cert, key := apitest.WriteTLSFiles(t, dir)
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  api.Config
		want string
	}{
		{"no tls", api.Config{TCPAddr: "127.0.0.1:0", Credentials: api.Credentials{TokenFile: token}}, "needs a TLS certificate, a TLS key and a token file"},
		{"no token", api.Config{TCPAddr: "127.0.0.1:0", Credentials: api.Credentials{TLSCertFile: cert, TLSKeyFile: key}}, "needs a TLS certificate"},
		{"short token", api.Config{TCPAddr: "127.0.0.1:0", Credentials: api.Credentials{TLSCertFile: cert, TLSKeyFile: key, TokenFile: short}}, "use at least 16"},
		{"bad cert", api.Config{TCPAddr: "127.0.0.1:0", Credentials: api.Credentials{TLSCertFile: token, TLSKeyFile: key, TokenFile: token}}, "TLS certificate"},
		{"tls without tcp", api.Config{Credentials: api.Credentials{TLSCertFile: cert, TLSKeyFile: key}}, "without a TCP address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Socket = filepath.Join(dir, "zkhost.sock")
			_, err := api.Listen(tt.cfg, apitest.NewFake(), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Listen = %v, want %q", err, tt.want)
			}
			if _, err := os.Stat(tt.cfg.Socket); !os.IsNotExist(err) {
				t.Error("a refused config left a socket behind")
			}
		})
	}
}

// tokenCall is a perRPC credential that sends a fixed authorization value.
type tokenCall string

func (v tokenCall) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if v == "" {
		return nil, nil
	}
	return map[string]string{"authorization": string(v)}, nil
}
func (tokenCall) RequireTransportSecurity() bool { return true }

func TestTCPTokenCheck(t *testing.T) {
	const token = "s3cret-token-0123456789"
	srv, certFile, _ := apitest.ServeTCP(t, apitest.NewFake("gpu0"), token)
	pem, _ := os.ReadFile(certFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})

	dial := func(auth string) *grpc.ClientConn {
		conn, err := grpc.NewClient(srv.TCPAddr().String(), grpc.WithTransportCredentials(creds), grpc.WithPerRPCCredentials(tokenCall(auth)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	ctx := testCtx(t)
	tests := []struct {
		name string
		auth string
		ok   bool
	}{
		{"right", "Bearer " + token, true},
		{"scheme case", "bearer " + token, true},
		{"missing", "", false},
		{"wrong", "Bearer " + token + "x", false},
		{"prefix", "Bearer " + token[:10], false},
		{"basic", "Basic " + token, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := zkhostv1.NewZkhostClient(dial(tt.auth))
			_, err := c.Status(ctx, &zkhostv1.StatusRequest{})
			// The stream interceptor guards Await the same way.
			stream, serr := c.Await(ctx, &zkhostv1.AwaitRequest{JobId: "nope"})
			if serr == nil {
				_, serr = stream.Recv()
			}
			if tt.ok {
				if err != nil || status.Code(serr) != codes.NotFound {
					t.Fatalf("Status = %v, Await = %v; want success and NotFound", err, serr)
				}
				return
			}
			if status.Code(err) != codes.Unauthenticated || status.Code(serr) != codes.Unauthenticated {
				t.Fatalf("Status = %v, Await = %v; want Unauthenticated", err, serr)
			}
			if strings.Contains(err.Error(), token) {
				t.Error("the refusal echoes the token")
			}
		})
	}

	// Plain TCP without TLS gets nowhere.
	plain, err := grpc.NewClient(srv.TCPAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	octx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	if _, err := zkhostv1.NewZkhostClient(plain).Status(octx, &zkhostv1.StatusRequest{}); err == nil {
		t.Error("plain-text TCP call succeeded")
	}
}

func TestTokenRefusalLogged(t *testing.T) {
	var buf strings.Builder
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Warn})
	const token = "the-right-token-0123"
	unary, _ := api.TokenInterceptors([]byte(token), logger)
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer guessed-token-9999"))
	_, err := unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/zkhost.v1.Zkhost/Status"}, func(context.Context, any) (any, error) {
		t.Fatal("handler ran with a wrong token")
		return nil, nil
	})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("err = %v", err)
	}
	log := buf.String()
	if !strings.Contains(log, "refused API call") || !strings.Contains(log, "Status") || !strings.Contains(log, "wrong token") {
		t.Errorf("log lacks the refusal: %s", log)
	}
	if strings.Contains(log, "guessed-token") || strings.Contains(log, token) {
		t.Errorf("log holds a token: %s", log)
	}
}

func TestReflection(t *testing.T) {
	srv := apitest.Serve(t, apitest.NewFake(), api.Config{})
	conn, err := grpc.NewClient("unix://"+srv.SocketPath(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if !strings.Contains(strings.Join(names, ","), "zkhost.v1.Zkhost") {
		t.Errorf("reflection lists %v", names)
	}
}
func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "localhost:1": true, "0.0.0.0:80": false, ":80": false, "10.0.0.1:80": false} {
		if api.IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%q) = %v", addr, !want)
		}
	}
}
