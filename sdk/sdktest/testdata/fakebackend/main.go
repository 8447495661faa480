// Command fakebackend is a tiny backend for the tests of package plugins (sdk/plugins)
// and of sdktest (which must fail it): it serves a fake sdk.Backend through
// sdk.Serve, so Launch, Serve, the gRPC adapters and the watchdog are tested across
// a real process boundary.
//
// Its Prove maps the partition with sdk.OpenPartition and answers the SHA-256 of
// W as the "proof". Two key ids do something else: "block" waits for the
// request's context to end (and then creates the file named by
// FAKEBACKEND_CANCEL_MARKER), "crash" exits the process. With
// FAKEBACKEND_IGNORE_SIGTERM=1 it ignores SIGTERM, so only the watchdog's poll
// can notice a dead host.
package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
)

type backend struct {
	log  hclog.Logger
	mu   sync.Mutex
	keys map[string]sdk.KeyRef
}

func (b *backend) Describe(context.Context) (sdk.Description, error) {
	return sdk.Description{
		Name:        "fakebackend",
		Version:     "0.0.1",
		APIVersions: []uint32{sdk.APIVersion},
		Device:      sdk.DeviceInfo{Kind: "cpu", Model: "fake", Available: true, MemoryTotal: 1 << 30, MemoryFree: 1 << 29},
		Curves:      []sdk.Curve{sdk.CurveBLS12381},
		MaxInFlight: 2,
	}, nil
}

func (b *backend) LoadKey(_ context.Context, key sdk.KeyRef) (sdk.KeyInfo, error) {
	if key.ID == "" || key.Path == "" {
		return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "key id and path are required")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.keys[key.ID]; ok && old.Digest != key.Digest {
		return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "key %s is loaded with another digest", key.ID)
	}
	b.keys[key.ID] = key
	return sdk.KeyInfo{HostBytes: 1}, nil
}

func (b *backend) UnloadKey(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.keys, id)
	return nil
}

func (b *backend) Prove(ctx context.Context, req sdk.ProveRequest) (sdk.ProveResult, error) {
	switch req.KeyID {
	case "crash":
		b.log.Error("crashing on purpose")
		os.Exit(3)
	case "block":
		<-ctx.Done()
		if marker := os.Getenv("FAKEBACKEND_CANCEL_MARKER"); marker != "" {
			_ = os.WriteFile(marker, []byte(ctx.Err().Error()), 0o600)
		}
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrCanceled, "prove: %v", ctx.Err())
	}
	b.mu.Lock()
	_, ok := b.keys[req.KeyID]
	b.mu.Unlock()
	if !ok {
		return sdk.ProveResult{}, sdk.Errorf(sdk.ErrKeyNotLoaded, "key %q is not loaded", req.KeyID)
	}
	p, err := sdk.OpenPartition(req.Partition)
	if err != nil {
		return sdk.ProveResult{}, err
	}
	defer p.Close()
	sum := sha256.Sum256(p.Bytes(sdk.SectionW))
	b.log.Info("proved", "key", req.KeyID, "wires", req.Partition.NbWires)
	return sdk.ProveResult{Proof: sum[:]}, nil
}

func main() {
	if os.Getenv("FAKEBACKEND_IGNORE_SIGTERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	log := sdk.NewLogger("fakebackend")
	log.Info("starting", "pid", os.Getpid())
	if err := sdk.Serve(&backend{log: log, keys: map[string]sdk.KeyRef{}}, sdk.WithLogger(log)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
