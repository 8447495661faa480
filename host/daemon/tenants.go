package daemon

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/journal"
)

// Tenants. Every job belongs to the identity that submitted it
// (api.IdentityFrom: a [[client]] token, a unix-socket peer's uid, or "admin");
// a client that is not an admin sees, awaits and cancels only its own jobs, and
// a job of another client is, to it, a job that does not exist. Request ids are
// scoped by owner in the journal, so clients cannot collide or probe each
// other's. Limits on waiting partitions (config [limits]) are checked at Submit.

// visible returns nil when the caller of ctx may see job jobID, and the same
// not-found error an unknown job gets otherwise.
func (d *Daemon) visible(ctx context.Context, jobID string) error {
	id := api.IdentityFrom(ctx)
	if id.Admin {
		return nil
	}
	rec, err := d.journal.GetJob(jobID)
	if errors.Is(err, journal.ErrNotFound) || err == nil && rec.Owner != id.Name {
		return api.NotFoundf("no job %q", jobID)
	}
	return err
}

// listOwner is the journal filter's owner for the caller of ctx: "" (every
// job) for an admin.
func listOwner(ctx context.Context) string {
	if id := api.IdentityFrom(ctx); !id.Admin {
		return id.Name
	}
	return ""
}

// waitingPartitions counts the partitions of unfinished jobs not yet verified,
// in total and those of owner.
func (d *Daemon) waitingPartitions(owner string) (total, mine int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, j := range d.jobs {
		if j.ended() {
			continue
		}
		n := 0
		for _, p := range j.parts {
			if p.State != api.PartitionVerified {
				n++
			}
		}
		total += n
		if j.owner == owner {
			mine += n
		}
	}
	return total, mine
}

// checkLimits refuses a job of n partitions of class from owner that would
// take the waiting partitions past a configured limit, naming the limit. As
// the memory budget does, the global limit keeps a share for critical work:
// a job of another class may fill it only up to queued_partitions minus
// critical_reserve (counting every class's waiting partitions), so clients
// at their own limits can never fill the daemon against a deadline proof.
func (d *Daemon) checkLimits(owner string, n int, class api.Class) error {
	lim := d.cfg.Limits
	if lim.QueuedPartitions <= 0 && lim.QueuedPartitionsPerClient <= 0 {
		return nil
	}
	total, mine := d.waitingPartitions(owner)
	if l := lim.QueuedPartitionsPerClient; l > 0 && mine+n > l {
		return limitError(fmt.Sprintf("client %s has %d partitions waiting; %d more would pass limits.queued_partitions_per_client = %d", ownerName(owner), mine, n, l), mine+n, l)
	}
	l := lim.QueuedPartitions
	if l <= 0 {
		return nil
	}
	if class != api.ClassCritical && lim.CriticalReserve > 0 {
		if room := l - lim.CriticalReserve; total+n > room {
			return limitError(fmt.Sprintf("the daemon has %d partitions waiting; %d more of class %s would pass the %d of limits.queued_partitions = %d that are not held for critical jobs (limits.critical_reserve = %d)",
				total, n, class, room, l, lim.CriticalReserve), total+n, room)
		}
	}
	if total+n > l {
		return limitError(fmt.Sprintf("the daemon has %d partitions waiting; %d more would pass limits.queued_partitions = %d", total, n, l), total+n, l)
	}
	return nil
}

func limitError(msg string, need, limit int) error {
	return &api.ResourceExhaustedError{Need: uint64(need), Limit: uint64(limit),
		Message: "job refused: " + msg + "; submit again when some of them are done"}
}

func ownerName(owner string) string {
	if owner == "" {
		return "admin"
	}
	return owner
}
