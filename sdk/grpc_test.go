package sdk

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	backendv1 "github.com/zkhost/zkhost/sdk/internal/proto/backendv1"
)

// fakeBackend is a Backend whose methods the test sets; an unset method panics,
// so a call the test did not expect fails loudly.
type fakeBackend struct {
	describe  func(ctx context.Context) (Description, error)
	loadKey   func(ctx context.Context, key KeyRef) (KeyInfo, error)
	unloadKey func(ctx context.Context, keyID string) error
	prove     func(ctx context.Context, req ProveRequest) (ProveResult, error)
}

func (f *fakeBackend) Describe(ctx context.Context) (Description, error) { return f.describe(ctx) }
func (f *fakeBackend) LoadKey(ctx context.Context, k KeyRef) (KeyInfo, error) {
	return f.loadKey(ctx, k)
}
func (f *fakeBackend) UnloadKey(ctx context.Context, id string) error { return f.unloadKey(ctx, id) }
func (f *fakeBackend) Prove(ctx context.Context, r ProveRequest) (ProveResult, error) {
	return f.prove(ctx, r)
}

// rawPlugin serves a backendv1 server as it is (an older backend's, or the
// real adapter) and dispenses the connection itself, so a test can call the
// wire directly or wrap it with NewBackendClient.
type rawPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv backendv1.BackendServer
}

func (p *rawPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	backendv1.RegisterBackendServer(s, p.srv)
	return nil
}

func (p *rawPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return conn, nil
}

// connect serves srv through go-plugin's gRPC server on a local socket and
// returns the client's connection and a function that stops the server.
func connect(t *testing.T, srv backendv1.BackendServer) (*grpc.ClientConn, func()) {
	t.Helper()
	client, server := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{BackendPluginName: &rawPlugin{srv: srv}})
	// Closing the client shuts the server down through go-plugin's controller.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(BackendPluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*grpc.ClientConn), server.Stop
}

func testDescription() Description {
	return Description{
		Name: "fake", Version: "1.2.3", APIVersions: []uint32{1, 2},
		Device: DeviceInfo{Kind: "cuda", Model: "NVIDIA H200", Index: 3, Available: false,
			Reason: "driver too old", MemoryTotal: 141 << 30, MemoryFree: 100 << 30},
		Curves:      []Curve{CurveBLS12381, CurveBN254},
		MaxInFlight: 2, HostBytesPerConstraint: 64, DeviceBytesPerConstraint: 320,
	}
}

func testHandle() PartitionHandle {
	h := PartitionHandle{Path: "/proc/1234/fd/17", Inode: 98765, Curve: CurveBLS12381, NbWires: 5, NbConstraints: 7}
	wOff, aOff, bOff, size := PartitionLayout(5, 7)
	h.WOffset, h.AOffset, h.BOffset, h.Size = wOff, aOff, bOff, int64(size)
	return h
}

func TestRoundTrip(t *testing.T) {
	desc := testDescription()
	key := KeyRef{ID: "chain-1k", Path: "/keys/chain.zkey", Digest: [32]byte{9, 8, 7}}
	handle := testHandle()
	result := ProveResult{
		Proof: []byte("proof bytes"), Wall: 1500 * time.Millisecond, DeviceBusy: 900 * time.Millisecond,
		Phases: []Phase{
			{Name: PhaseMap, Start: time.Millisecond, Wall: 2 * time.Millisecond, DeviceBusy: 0},
			{Name: PhaseMSMG1, Start: 10 * time.Millisecond, Wall: 800 * time.Millisecond, DeviceBusy: 700 * time.Millisecond},
		},
	}
	var mu sync.Mutex
	var gotKey KeyRef
	var gotUnload string
	var gotProve ProveRequest
	fb := &fakeBackend{
		describe: func(context.Context) (Description, error) { return desc, nil },
		loadKey: func(_ context.Context, k KeyRef) (KeyInfo, error) {
			mu.Lock()
			gotKey = k
			mu.Unlock()
			return KeyInfo{HostBytes: 11, DeviceBytes: 22}, nil
		},
		unloadKey: func(_ context.Context, id string) error {
			mu.Lock()
			gotUnload = id
			mu.Unlock()
			return nil
		},
		prove: func(_ context.Context, r ProveRequest) (ProveResult, error) {
			mu.Lock()
			gotProve = r
			mu.Unlock()
			return result, nil
		},
	}
	raw, _ := connect(t, &grpcServer{b: fb})
	c := NewBackendClient(raw)
	ctx := context.Background()

	d, err := c.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d, desc) {
		t.Errorf("Describe = %+v, want %+v", d, desc)
	}
	info, err := c.LoadKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if info != (KeyInfo{HostBytes: 11, DeviceBytes: 22}) {
		t.Errorf("LoadKey = %+v", info)
	}
	if err := c.UnloadKey(ctx, "old-key"); err != nil {
		t.Fatal(err)
	}
	res, err := c.Prove(ctx, ProveRequest{KeyID: key.ID, Partition: handle})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, result) {
		t.Errorf("Prove = %+v, want %+v", res, result)
	}
	mu.Lock()
	defer mu.Unlock()
	if gotKey != key {
		t.Errorf("backend got key %+v, want %+v", gotKey, key)
	}
	if gotUnload != "old-key" {
		t.Errorf("backend got unload %q", gotUnload)
	}
	if want := (ProveRequest{KeyID: key.ID, Partition: handle}); gotProve != want {
		t.Errorf("backend got prove %+v, want %+v", gotProve, want)
	}
}

func TestErrorTranslation(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		code      codes.Code
		kind      ErrorKind
		retryable bool
		message   string
	}{
		{"internal", &Error{Kind: ErrInternal, Retryable: false, Message: "bug"}, codes.Internal, ErrInternal, false, "bug"},
		{"invalid", Errorf(ErrInvalidArgument, "bad size %d", 3), codes.InvalidArgument, ErrInvalidArgument, false, "bad size 3"},
		{"digest", Errorf(ErrDigestMismatch, "sha"), codes.DataLoss, ErrDigestMismatch, false, "sha"},
		{"key", Errorf(ErrKeyNotLoaded, "key k"), codes.FailedPrecondition, ErrKeyNotLoaded, false, "key k"},
		{"exhausted", Errorf(ErrResourceExhausted, "vram"), codes.ResourceExhausted, ErrResourceExhausted, true, "vram"},
		{"unavailable", &Error{Kind: ErrUnavailable, Retryable: false, Message: "no gpu"}, codes.Unavailable, ErrUnavailable, false, "no gpu"},
		{"canceled", Errorf(ErrCanceled, "stop"), codes.Canceled, ErrCanceled, false, "stop"},
		{"unimplemented", Errorf(ErrUnimplemented, "bn254"), codes.Unimplemented, ErrUnimplemented, false, "bn254"},
		{"unsealed", Errorf(ErrUnsealed, "no F_SEAL_WRITE"), codes.PermissionDenied, ErrUnsealed, false, "no F_SEAL_WRITE"},
		{"unknown kind", &Error{Kind: ErrorKind(99), Message: "odd"}, codes.Internal, ErrInternal, false, "odd"},
		{"wrapped", fmt.Errorf("loading: %w", Errorf(ErrInvalidArgument, "inner")), codes.InvalidArgument, ErrInvalidArgument, false, "inner"},
		{"plain", errors.New("boom"), codes.Internal, ErrInternal, true, "boom"},
		{"context", fmt.Errorf("msm: %w", context.Canceled), codes.Canceled, ErrCanceled, false, "msm: context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fb := &fakeBackend{
				describe:  func(context.Context) (Description, error) { return Description{}, tc.err },
				loadKey:   func(context.Context, KeyRef) (KeyInfo, error) { return KeyInfo{}, tc.err },
				unloadKey: func(context.Context, string) error { return tc.err },
				prove:     func(context.Context, ProveRequest) (ProveResult, error) { return ProveResult{}, tc.err },
			}
			raw, _ := connect(t, &grpcServer{b: fb})
			c := NewBackendClient(raw)
			ctx := context.Background()

			// The status code on the wire.
			_, rawErr := backendv1.NewBackendClient(raw).Describe(ctx, &backendv1.DescribeRequest{})
			if got := status.Code(rawErr); got != tc.code {
				t.Errorf("status code %v, want %v", got, tc.code)
			}
			// The *Error after translation, for every method.
			calls := map[string]func() error{
				"Describe":  func() error { _, err := c.Describe(ctx); return err },
				"LoadKey":   func() error { _, err := c.LoadKey(ctx, KeyRef{ID: "k"}); return err },
				"UnloadKey": func() error { return c.UnloadKey(ctx, "k") },
				"Prove":     func() error { _, err := c.Prove(ctx, ProveRequest{KeyID: "k", Partition: testHandle()}); return err },
			}
			for method, call := range calls {
				err := call()
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("%s: error %v (%T) is not an *Error", method, err, err)
				}
				if e.Kind != tc.kind || e.Retryable != tc.retryable || e.Message != tc.message {
					t.Errorf("%s: got %+v, want kind %v retryable %v message %q", method, *e, tc.kind, tc.retryable, tc.message)
				}
			}
		})
	}
}

func TestBadRequestsNeverReachTheBackend(t *testing.T) {
	fb := &fakeBackend{} // every method panics if called
	conn, _ := connect(t, &grpcServer{b: fb})
	raw := backendv1.NewBackendClient(conn) // the wire, below the adapters
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"no key", func() error { _, err := raw.LoadKey(ctx, &backendv1.LoadKeyRequest{}); return err }, "no key"},
		{"short key digest", func() error {
			_, err := raw.LoadKey(ctx, &backendv1.LoadKeyRequest{Key: &backendv1.KeyRef{Id: "k", Digest: make([]byte, 5)}})
			return err
		}, "key digest has 5 bytes"},
		{"no partition", func() error { _, err := raw.Prove(ctx, &backendv1.ProveRequest{KeyId: "k"}); return err }, "no partition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			st, detail := detailOf(err)
			if st.Code() != codes.InvalidArgument || detail.GetKind() != backendv1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT {
				t.Fatalf("got %v (detail %v), want InvalidArgument", err, detail)
			}
			if !strings.Contains(st.Message(), tc.want) {
				t.Errorf("message %q does not mention %q", st.Message(), tc.want)
			}
		})
	}
}

func TestCancellationCrosses(t *testing.T) {
	started := make(chan struct{})
	serverSaw := make(chan error, 1)
	fb := &fakeBackend{
		prove: func(ctx context.Context, _ ProveRequest) (ProveResult, error) {
			close(started)
			select {
			case <-ctx.Done():
				serverSaw <- ctx.Err()
				return ProveResult{}, Errorf(ErrCanceled, "prove stopped: %v", ctx.Err())
			case <-time.After(10 * time.Second):
				serverSaw <- nil
				return ProveResult{}, errors.New("the backend's context was never cancelled")
			}
		},
	}
	raw, _ := connect(t, &grpcServer{b: fb})
	c := NewBackendClient(raw)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	t0 := time.Now()
	_, err := c.Prove(ctx, ProveRequest{KeyID: "k", Partition: testHandle()})
	if KindOf(err) != ErrCanceled {
		t.Fatalf("Prove after cancel: %v, want kind canceled", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not match context.Canceled", err)
	}
	if IsRetryable(err) {
		t.Errorf("a cancellation is retryable: %v", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Prove took %v to return after cancel", d)
	}
	select {
	case got := <-serverSaw:
		if !errors.Is(got, context.Canceled) {
			t.Errorf("backend's context ended with %v, want context.Canceled", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the backend's Prove context was not cancelled")
	}
}

func TestDeadlineCrossesAsCanceled(t *testing.T) {
	fb := &fakeBackend{
		describe: func(ctx context.Context) (Description, error) {
			<-ctx.Done()
			return Description{}, ctx.Err()
		},
	}
	raw, _ := connect(t, &grpcServer{b: fb})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := NewBackendClient(raw).Describe(ctx)
	if KindOf(err) != ErrCanceled || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want kind canceled matching DeadlineExceeded", err)
	}
}

func TestUnimplementedMethod(t *testing.T) {
	// A server that implements nothing stands for an older backend that lacks a
	// method added later.
	raw, _ := connect(t, backendv1.UnimplementedBackendServer{})
	_, err := NewBackendClient(raw).Describe(context.Background())
	if KindOf(err) != ErrUnimplemented {
		t.Fatalf("got %v, want kind unimplemented", err)
	}
}

func TestServerGoneIsPluginShutdown(t *testing.T) {
	fb := &fakeBackend{describe: func(context.Context) (Description, error) { return testDescription(), nil }}
	raw, stop := connect(t, &grpcServer{b: fb})
	c := NewBackendClient(raw)
	if _, err := c.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop()
	_, err := c.Describe(context.Background())
	if !errors.Is(err, ErrPluginShutdown) {
		t.Fatalf("got %v, want it to match ErrPluginShutdown", err)
	}
	if KindOf(err) != ErrUnavailable || !IsRetryable(err) {
		t.Errorf("got kind %v retryable %v, want unavailable and retryable", KindOf(err), IsRetryable(err))
	}
}

// TestConnectionClosedUnderCallIsPluginShutdown closes the client's
// connection while a call is in flight, as a plugin's shutdown does: gRPC
// cancels the call without ctx being done, and that is the plugin going away,
// not a cancellation by the caller.
func TestConnectionClosedUnderCallIsPluginShutdown(t *testing.T) {
	started := make(chan struct{})
	fb := &fakeBackend{prove: func(ctx context.Context, _ ProveRequest) (ProveResult, error) {
		close(started)
		<-ctx.Done()
		return ProveResult{}, ctx.Err()
	}}
	raw, stop := connect(t, &grpcServer{b: fb})
	defer stop()
	c := NewBackendClient(raw)
	done := make(chan error, 1)
	go func() {
		_, err := c.Prove(context.Background(), ProveRequest{KeyID: "k", Partition: testHandle()})
		done <- err
	}()
	<-started
	raw.Close()
	err := <-done
	if !errors.Is(err, ErrPluginShutdown) {
		t.Fatalf("got %v, want it to match ErrPluginShutdown", err)
	}
	if errors.Is(err, context.Canceled) || KindOf(err) != ErrUnavailable || !IsRetryable(err) {
		t.Errorf("got %v: kind %v retryable %v, want unavailable and retryable, not the caller's cancellation", err, KindOf(err), IsRetryable(err))
	}
}

func TestServeRefusesNil(t *testing.T) {
	if err := Serve(nil); err == nil {
		t.Fatal("Serve(nil) did not fail")
	}
}

// utilizationBackend is a fakeBackend that also reports utilization.
type utilizationBackend struct {
	fakeBackend
	utilization func(ctx context.Context, since time.Time) (Utilization, error)
}

func (u *utilizationBackend) Utilization(ctx context.Context, since time.Time) (Utilization, error) {
	return u.utilization(ctx, since)
}

func TestUtilizationRoundTrip(t *testing.T) {
	since := time.Unix(1700000000, 123456789)
	want := Utilization{Source: UtilizationNVML, Samples: []UtilizationSample{
		{Time: time.Unix(1700000001, 0), Period: 166 * time.Millisecond, Percent: 97},
		{Time: time.Unix(1700000001, 166e6), Period: 166 * time.Millisecond, Percent: 12.5},
	}}
	var gotSince []time.Time
	ub := &utilizationBackend{utilization: func(_ context.Context, s time.Time) (Utilization, error) {
		gotSince = append(gotSince, s)
		if s.IsZero() {
			return Utilization{}, Errorf(ErrUnavailable, "no NVML: libnvidia-ml.so.1 not found")
		}
		return want, nil
	}}
	raw, _ := connect(t, &grpcServer{b: ub})
	c := NewBackendClient(raw).(UtilizationReporter)
	got, err := c.Utilization(context.Background(), since)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got.Samples {
		if !got.Samples[i].Time.Equal(want.Samples[i].Time) {
			t.Fatalf("sample %d time %v, want %v", i, got.Samples[i].Time, want.Samples[i].Time)
		}
		got.Samples[i].Time = want.Samples[i].Time
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// The zero time crosses as zero, and a backend's error keeps its kind.
	_, err = c.Utilization(context.Background(), time.Time{})
	if KindOf(err) != ErrUnavailable || !strings.Contains(err.Error(), "no NVML") {
		t.Fatalf("got %v, want kind unavailable saying no NVML", err)
	}
	if len(gotSince) != 2 || !gotSince[0].Equal(since) || !gotSince[1].IsZero() {
		t.Fatalf("backend saw since %v, want [%v, zero]", gotSince, since)
	}
}

func TestUtilizationOptional(t *testing.T) {
	// A backend without UtilizationReporter answers unimplemented, as does
	// an older backend built before the call existed.
	for name, srv := range map[string]backendv1.BackendServer{
		"without the interface": &grpcServer{b: &fakeBackend{}},
		"older backend":         backendv1.UnimplementedBackendServer{},
	} {
		raw, _ := connect(t, srv)
		_, err := NewBackendClient(raw).(UtilizationReporter).Utilization(context.Background(), time.Now())
		if KindOf(err) != ErrUnimplemented {
			t.Fatalf("%s: got %v, want kind unimplemented", name, err)
		}
	}
}
