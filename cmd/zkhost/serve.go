package main

import (
	"context"
	"fmt"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/grpclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/daemon"
	"github.com/zkhost/zkhost/host/sdnotify"
	"github.com/zkhost/zkhost/host/web"
)

func cmdServe(ctx context.Context, inv cli.Invocation) error {
	args, stdout, stderr := inv.Args, inv.Stdout, inv.Stderr
	fs := inv.FlagSet(`Runs the proving daemon in the foreground until SIGINT or SIGTERM: the API on
its [api] socket (and TCP address, when set), one backend process per [[device]],
the key sets of its [[circuit]] entries (with none, those found in the state
directory's keys/), and the status page at [api] web_address when set.

The config is --config FILE, else $` + cli.EnvConfig + `, else the embedded defaults
(zkhost serve --print-default-config prints them). Export ` + cli.EnvConfig + `=FILE and
the client commands find this daemon too. Under systemd (Type=notify) it reports
READY=1 once the API listens, and STOPPING=1 when it begins to stop.

With [cluster] role = "synthesize" it runs no daemon, backend or API: it joins
the cluster and solves partitions for its proving hosts (docs/cluster.md).`)
	cfgPath := fs.String("config", "", "TOML config (default: $"+cli.EnvConfig+", else the embedded defaults; see examples/zkhost.toml)")
	printDefault := fs.Bool("print-default-config", false, "print the embedded default config and exit")
	reconfigure := fs.Bool("cluster-reconfigure", false, "change the cluster-wide [cluster] settings (replicas, ack_wait, [journal] retention) of the running cluster to this host's (docs/cluster.md)")
	pos, err := cli.Parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	if *printDefault {
		_, err := stdout.Write(config.DefaultTOML())
		return err
	}
	cfg, err := config.Load(cli.ConfigPath(*cfgPath))
	if err != nil {
		return err
	}
	if *reconfigure {
		if cfg.Cluster == nil {
			return fmt.Errorf("--cluster-reconfigure: the config has no [cluster]")
		}
		cfg.Cluster.Reconfigure = true
	}
	log := hclog.New(&hclog.LoggerOptions{
		Name: "zkhost", Output: stderr, Level: hclog.LevelFromString(cfg.LogLevel), JSONFormat: cfg.LogJSON,
	})
	// gRPC's own messages (transport errors, TLS handshakes) go through hclog too.
	glog := log.Named("grpc")
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(
		glog.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		glog.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn}),
		glog.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Error})))
	// What the config alone cannot tell (a socket directory, token files, the
	// journal's free space) is checked before anything starts.
	warnings, err := config.CheckStartup(cfg)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	log.Info("starting", "config", cfg.Source, "state_dir", cfg.StateDir)
	if cfg.Cluster != nil && cfg.Cluster.Role == config.RoleSynthesize {
		return serveSynthesis(ctx, cfg, log) // cluster.go
	}
	d, err := daemon.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	// A cluster whose NATS connection fails for good stops the host, which
	// then exits non-zero for its supervisor to start it again.
	ctx, stopServe := context.WithCancel(ctx)
	defer stopServe()
	clusterFailed := make(chan error, 1)
	failCluster := func(err error) {
		select {
		case clusterFailed <- err:
		default:
		}
		stopServe()
	}
	svc, stopCluster, err := serveCluster(ctx, cfg, d, log, failCluster) // cluster.go: d alone without [cluster]
	if err != nil {
		d.Close()
		return err
	}
	// The status page and /metrics show what the API serves: with [cluster],
	// the cluster too.
	if cfg.API.WebAddress != "" {
		ws, err := web.Start(web.Config{Address: cfg.API.WebAddress, Credentials: cfg.API.Credentials}, svc, log.Named("web"))
		if err != nil {
			d.Close()
			stopCluster()
			return err
		}
		defer ws.Close(context.Background())
		if !cfg.LogJSON { // JSON logs stay JSON lines; the web logger said where it listens
			fmt.Fprintf(stderr, "zkhost status page at %s (Prometheus: %smetrics)\n", ws.URL(), ws.URL())
		}
	}
	srv, err := api.Listen(cfg.API.Config, svc, log.Named("api"))
	if err != nil {
		d.Close()
		stopCluster()
		return err
	}
	errCh := make(chan error, 1)
	go func() { errCh <- srv.Serve() }()
	if !cfg.LogJSON {
		// A line for the operator; JSON logs carry the same in the API's "listening" entry.
		fmt.Fprintf(stderr, "zkhost serving on %s\n", cfg.API.Socket)
	}
	// Under systemd (Type=notify) the unit is started once clients can connect;
	// outside it this does nothing.
	if _, err := sdnotify.Notify(sdnotify.Ready + "\nSTATUS=serving on " + cfg.API.Socket); err != nil {
		log.Warn("telling systemd the daemon is ready", "error", err)
	}
	stopping := context.AfterFunc(ctx, func() {
		if _, err := sdnotify.Notify(sdnotify.Stopping); err != nil {
			log.Warn("telling systemd the daemon is stopping", "error", err)
		}
	})
	defer stopping()
	runErr := d.Run(ctx)
	select {
	case err := <-clusterFailed:
		if runErr == nil {
			runErr = err
		}
	default:
	}
	stopCluster()
	stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	srv.Stop(stopCtx)
	cancel()
	select {
	case err := <-errCh:
		if err != nil && runErr == nil {
			runErr = err
		}
	default:
	}
	return runErr
}
