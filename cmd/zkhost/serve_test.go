package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/cli"
)

// TestServeRefusesAtStart: settings the config alone cannot judge (a socket
// under a missing directory, a token file with a line break inside, a
// timeout outside its range) stop `zkhost serve` before it starts anything,
// naming the setting; the missing directories are not created.
func TestServeRefusesAtStart(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	token := filepath.Join(dir, "alice.token")
	if err := os.WriteFile(token, []byte("0123456789abcdef\n0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, toml, want string
	}{
		{"socket under a missing directory", fmt.Sprintf("[api]\nsocket = %q\n", filepath.Join(dir, "run", "zk", "zk.sock")),
			"api.socket: the directory of " + filepath.Join(dir, "run", "zk", "zk.sock") + " does not exist"},
		{"token file with a line break", fmt.Sprintf("[[client]]\nname = \"alice\"\ntoken_file = %q\n", token),
			`client[0].token_file (client "alice"): token file ` + token + ": the token has a line break inside it"},
		{"prove_timeout of 1ns", "[retry]\nprove_timeout = \"1ns\"\n", "retry.prove_timeout: 1ns is below the least allowed, 1s"},
		{"reserve of 1TiB", "[journal]\nreserve = \"1TiB\"\n", "journal.reserve: 1TiB is above the most allowed, 64GiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "zkhost.toml")
			text := fmt.Sprintf("state_dir = %q\n", state) + tc.toml
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			// A daemon that started anyway is stopped by the deadline.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := cmdServe(ctx, cli.Invocation{Command: cli.Command{Name: "serve"}, Args: []string{"--config", path}, Stdout: &stdout, Stderr: &stderr})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("serve: %v; want an error saying %q\nstderr:\n%s", err, tc.want, stderr.String())
			}
			for _, p := range []string{state, filepath.Join(dir, "run")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was created (or %v)", p, err)
				}
			}
		})
	}
}

// TestServeNotifiesSystemd: under a Type=notify unit, zkhost serve sends
// READY=1 once its socket accepts clients, and STOPPING=1 when told to stop
// (SIGTERM, here the context), then returns.
func TestServeNotifiesSystemd(t *testing.T) {
	dir := apitest.ShortTempDir(t)
	notifyPath := filepath.Join(dir, "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	t.Setenv("NOTIFY_SOCKET", notifyPath)
	backend := buildCPUBackend(t, dir)
	sock := filepath.Join(dir, "zk.sock")
	cfg := filepath.Join(dir, "zkhost.toml")
	text := fmt.Sprintf("state_dir = %q\nlog_level = \"info\"\n[api]\nsocket = %q\n[[device]]\nbackend = %q\n", filepath.Join(dir, "state"), sock, backend)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	go func() {
		var stdout bytes.Buffer
		done <- cmdServe(ctx, cli.Invocation{Command: cli.Command{Name: "serve"}, Args: []string{"--config", cfg}, Stdout: &stdout, Stderr: logFile})
	}()
	read := func() string {
		notify.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 4096)
		n, err := notify.Read(buf)
		if err != nil {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("no notification: %v\nserve's log:\n%s", err, log)
		}
		return string(buf[:n])
	}
	if got := read(); !strings.HasPrefix(got, "READY=1\n") || !strings.Contains(got, sock) {
		t.Fatalf("first notification %q, want READY=1 with the socket", got)
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("READY=1 came before the socket accepts: %v", err)
	}
	conn.Close()
	cancel()
	if got := read(); got != "STOPPING=1" {
		t.Errorf("notification on stop %q, want STOPPING=1", got)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return within 30 s of being told to stop")
	}
}
