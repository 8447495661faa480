package api

import "testing"

func TestClusterRequestID(t *testing.T) {
	job, idx, delivery, ok := ParseClusterRequestID(ClusterRequestID("abc", 12, 3))
	if !ok || job != "abc" || idx != 12 || delivery != 3 {
		t.Errorf("round trip = %q %d %d %v, want abc 12 3 true", job, idx, delivery, ok)
	}
	for _, id := range []string{"", "my-own-request", "cluster-", "cluster-abc-1", "cluster-abc-x-1", "cluster--1-1", "cluster-abc-1-y", "cluster-abc--1-1"} {
		if _, _, _, ok := ParseClusterRequestID(id); ok {
			t.Errorf("ParseClusterRequestID(%q) took a request id ClusterRequestID does not write", id)
		}
	}
}
