package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/cluster"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/daemon"
	"github.com/zkhost/zkhost/host/sdnotify"
	"github.com/zkhost/zkhost/sdk/circuit"
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

// serveSynthesis runs a synthesis host (cluster.role = "synthesize"): no
// daemon, no backend, no API; it loads its circuits, joins the cluster and
// solves partitions for the proving hosts until ctx ends. Its solvers, one
// thread each, number [synthesis] workers when set, else its cores
// ([synthesis] cores when set, else every core).
func serveSynthesis(ctx context.Context, cfg *config.Config, log hclog.Logger) error {
	ccs := cfg.Circuits
	if len(ccs) == 0 && cfg.StateDir != "" {
		var err error
		if ccs, err = daemon.DiscoverCircuits(filepath.Join(cfg.StateDir, "keys")); err != nil {
			return err
		}
	}
	circuits := map[string]*circuit.Circuit{}
	byFiles := map[string]*circuit.Circuit{}
	defer func() {
		for _, c := range byFiles {
			c.Close()
		}
	}()
	for i, cc := range ccs {
		dir, keyName, err := daemon.KeySet(cc)
		if err != nil {
			return fmt.Errorf("circuit[%d] %q: %w", i, cc.Name, err)
		}
		c := byFiles[filepath.Join(dir, keyName)]
		if c == nil {
			if c, err = circuit.Load(dir, keyName); err != nil {
				return fmt.Errorf("circuit[%d] %q: %w", i, cc.Name, err)
			}
			byFiles[filepath.Join(dir, keyName)] = c
			c.Program() // compiled now, not at the first partition
			log.Info("circuit loaded", "circuit", cc.Name, "key", c.Name, "constraints", c.NbConstraints, "wires", c.NbWires)
		}
		circuits[cc.Name] = c
	}
	workers := runtime.NumCPU()
	if cfg.Synthesis.CoresSet {
		workers = cfg.Synthesis.Cores
	}
	if cfg.Synthesis.WorkersSet {
		workers = cfg.Synthesis.Workers
	}
	joinCtx, cancel := context.WithTimeout(ctx, clusterJoinTimeout)
	cl, err := cluster.Start(joinCtx, cfg, nil, log.Named("cluster"))
	cancel()
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := sdnotify.Notify(sdnotify.Ready + "\nSTATUS=synthesizing for cluster " + cfg.Cluster.Prefix); err != nil {
		log.Warn("telling systemd the host is ready", "error", err)
	}
	err = cl.RunSynthesis(ctx, circuits, workers)
	st := cl.Synthesized()
	log.Info("synthesis host stopped", "partitions", st.Partitions, "constraints", st.Constraints, "bytes", st.Bytes)
	return err
}
