package cluster

import (
	"encoding/json"
	"testing"
	"time"
)

// TestHandBack: the decision of a host that pulled a partition of circuit
// "c": it hands the partition back only while a live host that holds c's key
// has free room, for at most affinityTries of its own deliveries of one
// partition and never past affinityMaxDelivered deliveries.
func TestHandBack(t *testing.T) {
	t0 := time.Unix(1000, 0)
	holder := presence{Host: "h0", Keys: []string{"a", "c"}, Free: 2}
	for _, tc := range []struct {
		name      string
		own       []string
		heard     []presence
		at        time.Time // when they were heard; t0 when zero
		delivered uint64
		want      string // the holder handed to; "" for none
	}{
		{"a holder with room", nil, []presence{holder}, t0, 1, "h0"},
		{"this host holds the key", []string{"c"}, []presence{holder}, t0, 1, ""},
		{"no host holds it", nil, []presence{{Host: "h0", Keys: []string{"a"}, Free: 4}}, t0, 1, ""},
		{"the holder is full", nil, []presence{{Host: "h0", Keys: []string{"c"}, Free: 0}}, t0, 1, ""},
		{"the holder was last heard too long ago", nil, []presence{holder}, t0.Add(-presenceTTL), 1, ""},
		{"the holder left", nil, []presence{holder, {Host: "h0", Gone: true}}, t0, 1, ""},
		{"the holder with the most room", nil, []presence{holder, {Host: "h2", Keys: []string{"c"}, Free: 5}}, t0, 1, "h2"},
		{"delivered too often already", nil, []presence{holder}, t0, affinityMaxDelivered + 1, ""},
		{"its own presence is not a holder's", nil, []presence{{Host: "me", Keys: []string{"c"}, Free: 3}}, t0, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeers("me")
			p.setOwn(tc.own)
			for _, pr := range tc.heard {
				p.heard(pr, tc.at)
			}
			got, ok := p.handBack("c", 7, tc.delivered, t0)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("handBack = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}

	// One partition is handed back at most affinityTries times by this host;
	// another partition has its own count.
	p := newPeers("me")
	p.heard(holder, t0)
	for i := range affinityTries + 1 {
		_, ok := p.handBack("c", 7, uint64(i+1), t0)
		if ok != (i < affinityTries) {
			t.Errorf("hand-back %d of one partition: %v", i+1, ok)
		}
	}
	if _, ok := p.handBack("c", 8, 1, t0); !ok {
		t.Error("another partition was not handed back")
	}
	// The counts go after a minute.
	if len(p.handedBack) != 2 {
		t.Errorf("%d counts kept, want 2", len(p.handedBack))
	}
	p.heard(holder, t0.Add(2*time.Minute))
	p.handBack("c", 9, 1, t0.Add(2*time.Minute))
	if len(p.handedBack) != 1 {
		t.Errorf("%d counts kept after two minutes, want 1 (the new one)", len(p.handedBack))
	}
}

// TestPresenceTravels: a host hears the presence another publishes, and a
// nudge addressed to it wakes its puller.
func TestPresenceTravels(t *testing.T) {
	urls := startServers(t, 1)
	a, b := member(t, urls, "h0", 1), member(t, urls, "h1", 1)
	data, _ := json.Marshal(presence{Host: "h0", Keys: []string{"chain"}, Free: 3})
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Presence is sent again and again; so here.
		if err := a.nc.Publish(a.n.presence+"h0", data); err != nil {
			t.Fatal(err)
		}
		b.peers.mu.Lock()
		h, ok := b.peers.seen["h0"]
		b.peers.mu.Unlock()
		if ok {
			if h.Free != 3 || len(h.Keys) != 1 || h.Keys[0] != "chain" {
				t.Errorf("heard %+v", h.presence)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("h1 never heard h0")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Drain a wake left by setup, then nudge.
	select {
	case <-b.wake:
	default:
	}
	if err := a.nc.Publish(a.n.nudge+"h1", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.wake:
	case <-time.After(30 * time.Second):
		t.Fatal("a nudge did not wake h1")
	}
}
