package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExampleCircuitsOnBN254 is the example circuits' path on BN254 as a user types
// it: `zkhost keygen --curve bn254`, `zkhost prove` of partitions whose witnesses
// the command draws for the circuit over BN254's field, through the daemon's
// pipeline and the CPU backend, and `zkhost verify`, for each example circuit; a
// curve zkhost does not prove is refused by name.
func TestExampleCircuitsOnBN254(t *testing.T) {
	backend := buildCPUBackend(t, t.TempDir())
	zkhost := zkhostRunner(t)
	keys := t.TempDir()
	for _, c := range []struct {
		args []string
		id   string
	}{
		{[]string{"--circuit", "chain", "--k", "8"}, "chain-k8-bn254"},
		{[]string{"--circuit", "sha256", "--param", "b=1"}, "sha256-b1-bn254"},
		{[]string{"--circuit", "merkle", "--d", "6", "--k", "2"}, "merkle-d6-k2-bn254"},
	} {
		out := zkhost(append(append([]string{"keygen", "--curve", "bn254"}, c.args...), "--out", keys)...)
		if !strings.Contains(out, "wrote "+c.id+".{ccs,vk,pk,json}") {
			t.Fatalf("keygen printed %q", out)
		}
		meta, err := os.ReadFile(filepath.Join(keys, c.id+".json"))
		if err != nil || !strings.Contains(string(meta), `"curve": "bn254"`) {
			t.Fatalf("%s.json: %v %s", c.id, err, meta)
		}
		proofs := filepath.Join(t.TempDir(), "proofs")
		out = zkhost("prove", "--keys", keys, "--circuit", c.id, "--partitions", "2", "--backend", backend, "--threads", "2", "--out", proofs)
		if !strings.Contains(out, "2 partitions proven and verified") {
			t.Errorf("prove printed %q", out)
		}
		if out := zkhost("verify", "--keys", keys, "--circuit", c.id, proofs); !strings.Contains(out, "2 of 2 proofs verify") {
			t.Errorf("verify printed %q", out)
		}
	}
	// `zkhost bench --curve bn254` serves the BN254 circuit whose key is there.
	out := zkhost("bench", "--circuit", "chain", "--k", "8", "--curve", "bn254", "--jobs", "1", "--partitions", "2",
		"--isolated", "0", "--keys", keys, "--backend", backend, "--threads", "2", "--no-timeline")
	if !strings.Contains(out, "zkhost bench: chain-k8-bn254, 1 jobs × 2 partitions") || !regexp.MustCompile(`proofs \(verified\) +│ 2 `).MatchString(out) {
		t.Errorf("bench --curve bn254 printed %q", out)
	}
	var stdout, stderr strings.Builder
	if code := run([]string{"keygen", "--curve", "bls12-377", "--circuit", "merkle", "--out", keys}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), `--curve: unknown curve "bls12-377": want bls12-381 or bn254`) {
		t.Errorf("keygen on another curve: exit %d, %q", code, stderr.String())
	}
}
