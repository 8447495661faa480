package web

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/metrics"
	"github.com/zkhost/zkhost/sdk"
)

// fakeService is a daemon at work: two devices, a running and a queued job,
// finished jobs, and busy history.
type fakeService struct {
	api.Service
	m      *metrics.Metrics
	status api.StatusReport
	jobs   []api.Job
	err    error
}

func (f *fakeService) Metrics() *metrics.Metrics { return f.m }

func (f *fakeService) Status(context.Context) (api.StatusReport, error) { return f.status, f.err }

func (f *fakeService) List(_ context.Context, filter api.ListFilter) ([]api.Job, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []api.Job
	for _, j := range f.jobs {
		if filter.State == api.JobStateUnspecified || j.State == filter.State {
			out = append(out, j)
		}
		if filter.Limit > 0 && len(out) == filter.Limit {
			break
		}
	}
	return out, nil
}

func newFake(now time.Time) *fakeService {
	m := metrics.New()
	// 15 minutes of proofs: dev0 busy about 90% with a dip, dev1 about 45%.
	for s := 900; s > 0; s -= 4 {
		at := now.Add(-time.Duration(s) * time.Second)
		busy0 := 3600 * time.Millisecond
		if s > 300 && s < 420 {
			busy0 = 1200 * time.Millisecond // a stretch waiting on synthesis
		}
		m.ObserveProve("dev0", at, at.Add(4*time.Second), sdk.ProveResult{Wall: 4 * time.Second, DeviceBusy: busy0})
		m.ObserveProve("dev1", at, at.Add(4*time.Second), sdk.ProveResult{Wall: 4 * time.Second, DeviceBusy: 1800 * time.Millisecond})
	}
	part := func(i int, s api.PartitionState) api.Partition { return api.Partition{Index: i, State: s} }
	running := []api.Partition{part(0, api.PartitionVerified), part(1, api.PartitionProving), part(2, api.PartitionProving), part(3, api.PartitionSynthesizing), part(4, api.PartitionSynthesizing), part(5, api.PartitionQueued), part(6, api.PartitionQueued)}
	running[4].SynthEnd = now
	jobs := []api.Job{
		{ID: "job-7f3a9c21", Circuit: "merkle", Class: api.ClassNormal, State: api.JobRunning, Partitions: running, CreatedAt: now.Add(-40 * time.Second)},
		{ID: "job-81bb0e4d", Circuit: "chain", Class: api.ClassCritical, State: api.JobQueued, Partitions: []api.Partition{part(0, api.PartitionQueued)}, CreatedAt: now.Add(-2 * time.Second)},
		{ID: "job-5e19aa07", Circuit: "merkle", Class: api.ClassNormal, State: api.JobDone, Partitions: []api.Partition{part(0, api.PartitionVerified), part(1, api.PartitionVerified)}, CreatedAt: now.Add(-95 * time.Second), FinishedAt: now.Add(-52 * time.Second)},
		{ID: "job-0c44d2f8", Circuit: "chain", Class: api.ClassLow, State: api.JobFailed, Partitions: []api.Partition{part(0, api.PartitionFailed)}, CreatedAt: now.Add(-200 * time.Second), FinishedAt: now.Add(-190 * time.Second), Error: "partition 0 failed after 3 attempt(s): <script>x</script>"},
	}
	return &fakeService{
		m: m,
		status: api.StatusReport{
			Queues: []api.ClassQueue{
				{Class: api.ClassCritical, Jobs: 1, Partitions: 1}, {Class: api.ClassHigh},
				{Class: api.ClassNormal, Jobs: 1, Partitions: 3}, {Class: api.ClassLow},
			},
			SynthesisRunning: 2, SynthesisCapacity: 4,
			Devices: []api.DeviceStatus{
				{Name: "dev0", Backend: "/usr/local/lib/zkhost/zkhost-backend-cuda", Model: "NVIDIA H200", Kind: "gpu", InFlight: 2, MaxInFlight: 2, BusyPercent: 91.5, KeysResident: []string{"merkle-d16-k4"}, Healthy: true},
				{Name: "dev1", Backend: "/usr/local/lib/zkhost/zkhost-backend-cpu", Model: "AMD EPYC 9654", Kind: "cpu", InFlight: 1, MaxInFlight: 2, BusyPercent: 44.8, KeysResident: []string{"merkle-d16-k4", "chain-k16"}, Restarts: 1, Healthy: true},
			},
			Budget:  api.BudgetStatus{UsedBytes: 23 << 30, TotalBytes: 100 << 30, CriticalReserveBytes: 10 << 30},
			Uptime:  3*time.Hour + 12*time.Minute,
			Version: "0.1.0-dev",
		},
		jobs: jobs,
	}
}

func TestStatusJSON(t *testing.T) {
	now := time.Now()
	svc := newFake(now)
	st, err := StatusJSON(context.Background(), svc, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"queued": 3, "synthesizing": 1, "staged": 1, "proving": 2, "finalizing": 0, "verified": 1}
	for p, n := range want {
		if st.Pipeline[p] != n {
			t.Errorf("pipeline %s = %d, want %d", p, st.Pipeline[p], n)
		}
	}
	if len(st.Devices) != 2 || st.Devices[1].Restarts != 1 || len(st.Devices[1].Keys) != 2 {
		t.Errorf("devices %+v", st.Devices)
	}
	if st.BusyHistory == nil || len(st.BusyHistory.Devices["dev0"]) != metrics.HistoryLength || st.BusyHistory.StepSeconds != 5 {
		t.Fatalf("busy history %+v", st.BusyHistory)
	}
	// dev1: 1.8 s busy every 4 s.
	h := st.BusyHistory.Devices["dev1"]
	if v := h[len(h)/2]; math.Abs(v-0.45) > 0.1 {
		t.Errorf("dev1 busy share mid-history %.2f, want about 0.45", v)
	}
	// Newest first: the queued job (2 s old), the running one (40 s), the done one (95 s), the failed one.
	if len(st.Jobs) != 4 || st.Jobs[0].ID != "job-81bb0e4d" || st.Jobs[1].ID != "job-7f3a9c21" || st.Jobs[2].Verified != 2 || math.Abs(st.Jobs[2].Seconds-43) > 1e-6 || st.Jobs[1].Seconds != 40 {
		t.Errorf("jobs %+v", st.Jobs)
	}
	if st.Budget.TotalBytes != 100<<30 || st.Synthesis.Capacity != 4 || st.UptimeSeconds != 11520 {
		t.Errorf("status %+v", st)
	}
}

// serveFake serves a fake service's page and metrics over plain HTTP until
// the test ends.
func serveFake(t *testing.T, svc *fakeService) *httptest.Server {
	t.Helper()
	reg, err := metrics.NewRegistry(svc.m, svc)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(svc, reg))
	t.Cleanup(srv.Close)
	return srv
}

func TestHandler(t *testing.T) {
	svc := newFake(time.Now())
	srv := serveFake(t, svc)
	for _, tc := range []struct {
		path, contains, ctype string
		code                  int
	}{
		{"/", "<title>zkhost status</title>", "text/html", 200},
		{"/api/status.json", `"busy_history"`, "application/json", 200},
		{"/metrics", "zkhost_device_busy_seconds_total{device=\"dev0\"}", "text/plain", 200},
		{"/nope", "404", "text/plain", 404},
	} {
		code, body, h := get(t, srv.Client(), srv.URL+tc.path, "")
		if code != tc.code || !strings.Contains(body, tc.contains) || !strings.HasPrefix(h.Get("Content-Type"), tc.ctype) {
			t.Errorf("%s: %d %s %q…, want %d %s containing %q", tc.path, code, h.Get("Content-Type"), first(body), tc.code, tc.ctype, tc.contains)
		}
	}
	// Without a registry there is no /metrics; a failing service is a 503 with its error.
	svc.err = errors.New("daemon is stopping")
	srv2 := httptest.NewServer(Handler(svc, nil))
	defer srv2.Close()
	if code, _, _ := get(t, srv2.Client(), srv2.URL+"/metrics", ""); code != 404 {
		t.Errorf("/metrics without a registry: %d", code)
	}
	if code, body, _ := get(t, srv2.Client(), srv2.URL+"/api/status.json", ""); code != 503 || !strings.Contains(body, "daemon is stopping") {
		t.Errorf("failing service: %d %s", code, body)
	}
}

func TestListenWithToken(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	tokenFile := filepath.Join(dir, "token")
	token := "0123456789abcdef0123456789abcdef"
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	svc := newFake(time.Now())
	reg, _ := metrics.NewRegistry(svc.m, svc)
	s, err := Listen(Config{Address: "127.0.0.1:0", Credentials: api.Credentials{TokenFile: tokenFile, TLSCertFile: cert, TLSKeyFile: key}}, Handler(svc, reg), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Errorf("url %s", s.URL())
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	base := strings.TrimSuffix(s.URL(), "/")
	for _, tc := range []struct {
		path, token string
		code        int
	}{
		{"/", "", 401}, // the page too: a login form instead
		{"/", token, 200},
		{"/api/status.json", "", 401},
		{"/api/status.json", "wrong-token-wrong-token", 401},
		{"/api/status.json", token, 200},
		{"/metrics", "", 401},
		{"/metrics", token, 200},
	} {
		if code, _, _ := get(t, c, base+tc.path, tc.token); code != tc.code {
			t.Errorf("%s with token %q: %d, want %d", tc.path, tc.token, code, tc.code)
		}
	}
	// Without the token, the page is a login form and nothing else.
	if code, body, _ := get(t, c, base+"/", ""); code != 401 || !strings.Contains(body, `action="/login"`) || strings.Contains(body, "tokenbox") {
		t.Errorf("page without a token: %d\n%s", code, body)
	}
	// A browser signs in once and holds a session cookie (not the token).
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Transport: c.Transport}
	resp, err := browser.PostForm(base+"/login", url.Values{"token": {"wrong-token-wrong-token"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || len(jar.Cookies(resp.Request.URL)) != 0 {
		t.Errorf("login with a wrong token: %d, cookies %v", resp.StatusCode, jar.Cookies(resp.Request.URL))
	}
	resp, err = browser.PostForm(base+"/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "tokenbox") {
		t.Errorf("login with the token, redirected to the page: %d\n%.300s", resp.StatusCode, page)
	}
	cookies := jar.Cookies(resp.Request.URL)
	if len(cookies) != 1 || strings.Contains(cookies[0].Value, token) {
		t.Errorf("session cookies %v: want one, not holding the token", cookies)
	}
	for _, path := range []string{"/api/status.json", "/metrics"} {
		if code, _, _ := get(t, browser, base+path, ""); code != 200 {
			t.Errorf("%s with the session cookie: %d", path, code)
		}
	}
	// Plain HTTP to a TLS listener is refused.
	if code, _, _ := get(t, http.DefaultClient, "http://"+s.Addr().String()+"/api/status.json", token); code == 200 {
		t.Error("plain HTTP answered")
	}
}

func TestListenPlain(t *testing.T) {
	s, err := Listen(Config{Address: "127.0.0.1:0"}, Handler(newFake(time.Now()), nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(t, http.DefaultClient, s.URL()+"api/status.json", ""); code != 200 {
		t.Errorf("status %d", code)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", s.Addr().String(), time.Second); err == nil {
		t.Error("still listening after Close")
	}
}

func TestListenRefuses(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc"), 0o600)
	busy, _ := net.Listen("tcp", "127.0.0.1:0")
	defer busy.Close()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no address", Config{}, "no address"},
		{"token without TLS", Config{Address: "127.0.0.1:0", Credentials: api.Credentials{TokenFile: short}}, "needs a TLS certificate"},
		{"TLS without token", Config{Address: "127.0.0.1:0", Credentials: api.Credentials{TLSCertFile: cert, TLSKeyFile: key}}, "without a token"},
		{"short token", Config{Address: "127.0.0.1:0", Credentials: api.Credentials{TokenFile: short, TLSCertFile: cert, TLSKeyFile: key}}, "at least 16"},
		{"bad cert", Config{Address: "127.0.0.1:0", Credentials: api.Credentials{TokenFile: filepath.Join(dir, "missing"), TLSCertFile: cert, TLSKeyFile: key}}, "token file"},
		{"address in use", Config{Address: busy.Addr().String()}, "listen on"},
		{"plain HTTP off loopback", Config{Address: "0.0.0.0:0"}, "not a loopback address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Listen(tc.cfg, http.NotFoundHandler(), nil)
			if err == nil {
				s.Close(context.Background())
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func get(t *testing.T, c *http.Client, url, token string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error(), http.Header{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func first(s string) string {
	if len(s) > 80 {
		return s[:80]
	}
	return s
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zkhost test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

func TestStart(t *testing.T) {
	s, err := Start(Config{Address: "127.0.0.1:0"}, newFake(time.Now()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	code, body, _ := get(t, http.DefaultClient, s.URL()+"metrics", "")
	for _, want := range []string{`zkhost_device_busy_seconds_total{device="dev0"}`, `zkhost_partitions{class="normal",phase="proving"} 2`, "go_goroutines", `zkhost_budget_bytes 1.073741824e+11`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
}
