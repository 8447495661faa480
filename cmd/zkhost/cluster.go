package main

import (
	"context"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/cluster"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/daemon"
)

// clusterJoinTimeout bounds the wait for JetStream at start: servers of a
// cluster starting together elect a leader once a majority is up.
const clusterJoinTimeout = 2 * time.Minute

// serveCluster returns the service the API serves: the daemon alone, or, with
// [cluster], the cluster member built on it, pulling partitions until ctx
// ends. stop ends the puller, waits for it and leaves the cluster; call it after the
// daemon has stopped. A member whose NATS connection fails for good calls
// fail with why: serve then stops and exits non-zero, for its supervisor to
// start it again.
func serveCluster(ctx context.Context, cfg *config.Config, d *daemon.Daemon, log hclog.Logger, fail func(error)) (svc api.Service, stop func(), err error) {
	if cfg.Cluster == nil {
		return d, func() {}, nil
	}
	joinCtx, cancel := context.WithTimeout(ctx, clusterJoinTimeout)
	defer cancel()
	cl, err := cluster.Start(joinCtx, cfg, d, log.Named("cluster"))
	if err != nil {
		return nil, nil, err
	}
	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := cl.Run(runCtx); err != nil {
			log.Error("leaving: the cluster connection failed", "error", err)
			fail(err)
		}
	}()
	return cl, func() {
		stopRun()
		<-done
		cl.Close()
	}, nil
}
