package plugins_test

import (
	"context"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/plugins"
)

// describeOnly is a backend that answers Describe and refuses the rest.
type describeOnly struct{ name string }

func (d describeOnly) Describe(context.Context) (sdk.Description, error) {
	return sdk.Description{Name: d.name, APIVersions: []uint32{sdk.APIVersion}}, nil
}
func (describeOnly) LoadKey(context.Context, sdk.KeyRef) (sdk.KeyInfo, error) {
	return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrUnimplemented, "describeOnly")
}
func (describeOnly) UnloadKey(context.Context, string) error {
	return sdk.Errorf(sdk.ErrUnimplemented, "describeOnly")
}
func (describeOnly) Prove(context.Context, sdk.ProveRequest) (sdk.ProveResult, error) {
	return sdk.ProveResult{}, sdk.Errorf(sdk.ErrUnimplemented, "describeOnly")
}

// TestServeDebugAndAttach serves a backend in debug mode (sdk.WithDebug) in
// this process and attaches to it as a host would (Attach).
func TestServeDebugAndAttach(t *testing.T) {
	fb := describeOnly{name: "fake"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	serveErr := make(chan error, 1)
	logger := hclog.New(&hclog.LoggerOptions{Output: hclog.DefaultOutput, Level: hclog.Warn})
	go func() { serveErr <- sdk.Serve(fb, sdk.WithDebug(ctx, reattach, closed), sdk.WithLogger(logger)) }()

	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattach:
	case err := <-serveErr:
		t.Fatalf("Serve returned early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no reattach config from Serve")
	}
	proc, err := plugins.Attach(rc, logger)
	if err != nil {
		t.Fatal(err)
	}
	d, err := proc.Backend().Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "fake" {
		t.Errorf("Describe.Name = %q", d.Name)
	}
	cancel()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop after its context ended")
	}
	if err := <-serveErr; err != nil {
		t.Errorf("Serve: %v", err)
	}
	proc.Kill()
}
