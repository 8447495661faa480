package inprocess

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/zkhost/zkhost/host/config"
)

func TestDaemonConfig(t *testing.T) {
	sha := config.Digest(bytes.Repeat([]byte{0xab}, 32))
	o := Options{Circuit: "chain-k4", KeyDir: "/k", Backend: "/b/be", BackendSHA256: sha, Devices: 2, InFlight: 2, Threads: 3, Workers: 1,
		Timeline: "/t/tl.jsonl", BackendEnv: map[string]string{"B": "2", "A": "x y"}}
	cfg, err := daemonConfig(o, "/s")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Devices) != 2 || cfg.Devices[1].Index != 1 || cfg.Devices[0].InFlight != 2 || cfg.Devices[0].Options["threads"] != "3" ||
		cfg.Devices[0].Options["max-in-flight"] != "2" || !bytes.Equal(cfg.Devices[0].SHA256, sha) || !bytes.Equal(cfg.Devices[1].SHA256, sha) || cfg.Devices[1].Env["A"] != "x y" || cfg.Devices[0].Env["B"] != "2" ||
		cfg.Timeline.Path != "/t/tl.jsonl" || cfg.Timeline.MaxBytes != 0 || cfg.Synthesis.Workers != 1 ||
		len(cfg.Circuits) != 1 || cfg.Circuits[0].Name != "chain-k4" || cfg.Circuits[0].Keys != "/k" || cfg.StateDir != "/s" || cfg.LogLevel != "warn" {
		t.Errorf("config %+v", cfg)
	}
	// No timeline asked for: none written, not one in the state directory.
	// Nor a pin without one.
	cfg, err = daemonConfig(Options{Circuit: "c", KeyDir: "/k", Backend: "/b", LogLevel: "debug"}, "/s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timeline.Path != "" || len(cfg.Devices) != 1 || cfg.Devices[0].Index != 0 || cfg.Devices[0].SHA256 != nil || cfg.LogLevel != "debug" {
		t.Errorf("config %+v", cfg)
	}
}

func TestStartRefuses(t *testing.T) {
	if _, err := Start(context.Background(), Options{Circuit: "c", KeyDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no backend binary") {
		t.Errorf("Start without a backend: %v", err)
	}
	// A circuit the key directory does not hold fails the daemon's start, and
	// its temporary state directory goes with it.
	if _, err := Start(context.Background(), Options{Circuit: "nosuch", KeyDir: t.TempDir(), Backend: "/bin/true"}); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("Start with a missing key set: %v", err)
	}
}
