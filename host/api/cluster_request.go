package api

import (
	"fmt"
	"strconv"
	"strings"
)

// clusterRequestPrefix starts the request id of every job a cluster host
// submits to its own daemon for a partition of a cluster job.
const clusterRequestPrefix = "cluster-"

// ClusterRequestID is the request id under which a cluster host submits
// partition idx of cluster job job, on the partition's delivery'th delivery
// (1 for the first), as a one-partition job of its own daemon. The daemon's
// job list and timeline keep it, so a reader of either (zkhost bench) can
// tell which cluster job a local job served.
func ClusterRequestID(job string, idx int, delivery uint64) string {
	return fmt.Sprintf("%s%s-%d-%d", clusterRequestPrefix, job, idx, delivery)
}

// ParseClusterRequestID reads what ClusterRequestID wrote; ok is false for
// any other request id (a job a client submitted to the host itself).
func ParseClusterRequestID(id string) (job string, idx int, delivery uint64, ok bool) {
	rest, found := strings.CutPrefix(id, clusterRequestPrefix)
	if !found {
		return "", 0, 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 || parts[0] == "" {
		return "", 0, 0, false
	}
	idx, err := strconv.Atoi(parts[1])
	if err != nil || idx < 0 {
		return "", 0, 0, false
	}
	delivery, err = strconv.ParseUint(parts[2], 10, 64)
	if err != nil {
		return "", 0, 0, false
	}
	return parts[0], idx, delivery, true
}
