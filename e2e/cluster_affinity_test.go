package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zkhost/zkhost/host/api"
)

// TestClusterKeyAffinity: a host prefers the circuits whose keys it holds.
// h0 loads its keys at start, pulls at most 2 partitions at once and proves
// each in a second or more; h1 loads
// none until it proves (keys preload off); h2 serves merkle only. While h0 has
// room, chain partitions go to h0 and h1 loads no chain key; while h0 is busy
// h1 proves them too; with h0 gone (kill -9) h1, whose key was evicted, proves
// them all. Every proof verifies. (Jobs are submitted to h1: a host accepts
// jobs only of circuits it serves itself.)
func TestClusterKeyAffinity(t *testing.T) {
	hosts, urls := startClusterWith(t, 3, func(i int) (hostConf, string) {
		hc := hostConf{Devices: []deviceConf{cpuDevice()}}
		switch i {
		case 0:
			// A slow device (1s more per proof): busy while it holds two.
			hc.Devices = []deviceConf{faultDevice(map[string]string{"slow": "1s"})}
			return hc, "pull = 2"
		case 1:
			hc.NoPreload = true
		case 2:
			hc.Circuits = fmt.Sprintf("[[circuit]]\nname = \"merkle\"\nkeys = %q\n\n", keyDir)
		}
		return hc, ""
	})
	h0, h1, h2 := hosts[0], hosts[1], hosts[2]
	// What h1 hears of the others, heard here on h1's own NATS server.
	nc, err := nats.Connect(urls[1])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	heard, err := nc.SubscribeSync("zkhost.hosts.*")
	if err != nil {
		t.Fatal(err)
	}
	type presence struct {
		Host string
		Keys []string
		Free int
	}
	waitPresence := func(what string, ok func(p presence) bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			m, err := heard.NextMsg(time.Until(deadline))
			if err != nil {
				break
			}
			var p presence
			if json.Unmarshal(m.Data, &p) == nil && ok(p) {
				return
			}
		}
		t.Fatalf("never heard %s", what)
	}
	provers := func(job api.Job) []string {
		var out []string
		for _, p := range job.Partitions {
			out = append(out, strings.Split(p.Device, "/")[0])
		}
		return out
	}
	holds := func(h *host, circuit string) bool {
		for _, d := range h.status().Devices {
			if slices.Contains(d.KeysResident, circuit) {
				return true
			}
		}
		return false
	}

	// h0 holds chain's key and has room for the whole job: it proves it all,
	// though the job was submitted to h1 and every host pulls.
	waitPresence("h0 with chain's key and room for 2", func(p presence) bool {
		return p.Host == "h0" && slices.Contains(p.Keys, "chain") && p.Free == 2
	})
	job := h1.submit("chain", 400, 2, api.ClassNormal)
	got, _ := h2.await(job.ID, 3*time.Minute)
	checkDone(t, got, "chain", 400, 2)
	if p := provers(got); slices.ContainsFunc(p, func(h string) bool { return h != "h0" }) {
		t.Errorf("proved on %v while h0 held the key and had room; want h0 only", p)
	}
	if holds(h1, "chain") {
		t.Error("h1 loaded chain's key while h0 held it with room")
	}
	handBacks := func() string {
		const line = "handing a partition back for the host that holds its key"
		return fmt.Sprintf("h1 %d, h2 %d", strings.Count(h1.logText(), line), strings.Count(h2.logText(), line))
	}
	t.Logf("hand-backs so far: %s", handBacks())

	// h0 is busy (2 at once): h1 proves what h0 has no room for.
	job = h1.submit("chain", 401, 8, api.ClassNormal)
	got, _ = h0.await(job.ID, 3*time.Minute)
	checkDone(t, got, "chain", 401, 8)
	p := provers(got)
	t.Logf("8 partitions with h0 busy: proved on %v", p)
	if !slices.Contains(p, "h1") {
		t.Errorf("proved on %v: h1 never proved while h0 was busy", p)
	}

	// h0 is gone: h1, which holds no key again, proves everything.
	if _, err := h1.client.EvictKey(ctxFor(t, time.Minute), "chain", ""); err != nil {
		t.Fatal(err)
	}
	waitPresence("h1 without chain's key", func(p presence) bool { return p.Host == "h1" && !slices.Contains(p.Keys, "chain") })
	h0.kill()
	// Until JetStream has elected leaders again in place of h0's server, a
	// submit is refused as unavailable, or times out: retried, with one
	// request id.
	req := api.SubmitRequest{Circuit: "chain", Witnesses: witnesses(t, "chain", 402, 3), RequestID: "affinity-gone"}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		job, err = h1.client.Submit(ctxFor(t, 30*time.Second), req)
		if err == nil {
			break
		}
		retry := errors.Is(err, api.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
		if !retry || time.Now().After(deadline) {
			t.Fatalf("submit with h0 gone: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	got, _ = h2.await(job.ID, 3*time.Minute)
	checkDone(t, got, "chain", 402, 3)
	if p := provers(got); slices.ContainsFunc(p, func(h string) bool { return h != "h1" }) {
		t.Errorf("proved on %v with h0 gone; want h1 only", p)
	}
	t.Logf("hand-backs in all: %s", handBacks())
	h1.stop()
	h2.stop()
}
