package sdk

import (
	"context"
	"os"
	"strconv"
	"time"
)

// ParentPIDEnv is the environment variable through which the host's launcher
// (sdk/plugins.Launch) tells a plugin
// the host's process id, so WatchParent also notices a host that died before the
// watch began.
const ParentPIDEnv = "ZKHOST_BACKEND_PARENT_PID"

// watchInterval is how often WatchParent polls. A backend whose host died holds
// its device at most this long past the death when the death signal is missed.
const watchInterval = 500 * time.Millisecond

// WatchParent makes the calling process notice the death of the process that
// started it and calls onDeath once when it does; onDeath is expected to exit.
// It returns at once and watches until ctx is done.
//
// On Linux it first asks the kernel to send SIGTERM when the parent dies
// (prctl PR_SET_PDEATHSIG); that signal's default action ends the process
// without calling onDeath. Because the kernel ties that signal to the parent
// thread, not the parent process, and because the parent may have died before
// the call, WatchParent also polls: the parent died when os.Getppid changes
// (the process was re-parented) or when the host named by ParentPIDEnv no
// longer exists.
func WatchParent(ctx context.Context, onDeath func()) {
	setParentDeathSignal()
	hostPID, _ := strconv.Atoi(os.Getenv(ParentPIDEnv))
	w := parentWatch{
		getppid:  os.Getppid,
		alive:    processAlive,
		hostPID:  hostPID,
		interval: watchInterval,
	}
	go w.run(ctx, onDeath)
}

// parentWatch is the polling half of WatchParent, with its sources of truth
// injectable for tests.
type parentWatch struct {
	getppid  func() int
	alive    func(pid int) bool
	hostPID  int // 0 when unknown
	interval time.Duration
}

func (w parentWatch) run(ctx context.Context, onDeath func()) {
	ppid := w.getppid()
	dead := func() bool {
		return w.getppid() != ppid || (w.hostPID > 0 && !w.alive(w.hostPID))
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		if dead() {
			onDeath()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
