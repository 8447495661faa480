package daemon

import (
	"context"
	"slices"
	"time"

	"github.com/zkhost/zkhost/host/queue"
	"github.com/zkhost/zkhost/sdk"
)

// placementRecheck is how often a waiting device slot re-reads the other
// devices' health: which devices may take work changes without the ready queue
// changing, and PopIf re-checks only when an item is added.
const placementRecheck = 250 * time.Millisecond

// kindCPU is the Description.Device.Kind of CPU backends; every other kind
// counts as a GPU (an accelerator) for the CPU fallback.
const kindCPU = "cpu"

// isCPU reports whether de proves on the CPU.
func (de *deviceEntry) isCPU() bool { return de.dev.Description().Device.Kind == kindCPU }

// serving reports whether de can take work now: healthy (or restarting) and with
// usable hardware.
func (de *deviceEntry) serving() bool {
	return de.dev.Healthy() && de.dev.Description().Device.Available
}

// hasGPU reports whether any configured device is a GPU.
func (d *Daemon) hasGPU() bool {
	for _, de := range d.devices {
		if !de.isCPU() {
			return true
		}
	}
	return false
}

// gpuServing reports whether a GPU device can take work now.
func (d *Daemon) gpuServing() bool {
	for _, de := range d.devices {
		if !de.isCPU() && de.serving() {
			return true
		}
	}
	return false
}

// mayTakeWork reports whether de should take partitions now. A CPU device next
// to GPUs is the CPU fallback: it takes work only while no GPU can.
func (d *Daemon) mayTakeWork(de *deviceEntry) bool {
	if !de.serving() {
		return false
	}
	return !de.isCPU() || !d.gpuServing()
}

// nextFor waits for the next partition device de should prove: the first in
// dispatch order, skipping a partition that already failed on de while another
// device that may take work has not failed it, so a retry goes elsewhere when
// it can, and a partition whose key is resident on another device with a free
// slot while de lacks it, so keys are loaded once rather than on every device. It returns an error only when the daemon stops.
func (d *Daemon) nextFor(de *deviceEntry) (queue.Item[*task], error) {
	name := de.dev.Name()
	for {
		if err := d.ctx.Err(); err != nil {
			return queue.Item[*task]{}, err
		}
		// A CPU fallback beside serving GPUs takes only the partitions of keys
		// every serving GPU refused for good.
		refusedOnly := false
		if !d.mayTakeWork(de) {
			if !de.isCPU() || !de.serving() {
				// Leave the work to other devices until this one may take it.
				select {
				case <-d.ctx.Done():
				case <-time.After(placementRecheck):
				}
				continue
			}
			refusedOnly = true
		}
		var others []*deviceEntry
		var otherNames []string
		for _, o := range d.devices {
			if o != de && d.mayTakeWork(o) {
				others = append(others, o)
				otherNames = append(otherNames, o.dev.Name())
			}
		}
		ctx, cancel := context.WithTimeout(d.ctx, placementRecheck)
		it, err := d.readyQ.PopIf(ctx, func(it queue.Item[*task]) bool {
			ce := it.Value.job.circ
			if refusedOnly && !d.gpusRefuse(ce) {
				return false
			}
			return !de.refuses(ce) && placeOn(it.Value.failedOn, name, otherNames) && !keyElsewhere(de, others, ce.key.ID)
		})
		cancel()
		if err == nil {
			return it, nil
		}
	}
}

// keyElsewhere reports whether key is resident on one of others with a free slot
// while de lacks it: the partition is left to that device, which proves it without
// loading the key here (a key upload costs seconds at scale). Read fresh at each
// look at the queue, since residency changes without the queue changing.
func keyElsewhere(de *deviceEntry, others []*deviceEntry, key string) bool {
	if de.dev.HasKey(key) {
		return false
	}
	for _, o := range others {
		if info := o.dev.Info(); info.InFlight < info.MaxInFlight && o.dev.HasKey(key) {
			return true
		}
	}
	return false
}

// placeOn reports whether a partition that failed on the devices in failedOn
// should go to device name, given the other devices that may take work.
func placeOn(failedOn map[string]bool, name string, others []string) bool {
	if !failedOn[name] {
		return true
	}
	for _, o := range others {
		if !failedOn[o] {
			return false
		}
	}
	return true
}

// refuses reports whether de's backend cannot prove ce's partitions: it does
// not declare the circuit's curve (Description.Curves), or it refused the key
// for good (refuseKey: it cannot hold the key, its slots and a proof even alone
// on the device, or cannot prove with a key of its kind).
func (de *deviceEntry) refuses(ce *circuitEntry) bool {
	if !de.provesOn(ce.c.Curve) {
		return true
	}
	de.mu.Lock()
	defer de.mu.Unlock()
	_, ok := de.tooSmall[ce.key.ID]
	return ok
}

// provesOn reports whether de's backend declares curve (Description.Curves).
func (de *deviceEntry) provesOn(curve sdk.Curve) bool {
	return slices.Contains(de.dev.Description().Curves, curve)
}

// gpusRefuse reports whether every serving GPU refuses ce's partitions.
func (d *Daemon) gpusRefuse(ce *circuitEntry) bool {
	for _, de := range d.devices {
		if !de.isCPU() && de.serving() && !de.refuses(ce) {
			return false
		}
	}
	return true
}

// refusedForGood reports whether a Prove error is a backend's refusal of the
// partition's key for good: a permanent ErrResourceExhausted (its device
// cannot hold the key even alone) or ErrUnimplemented (it cannot prove with a
// key of this kind, such as one in snarkjs's H form on the CUDA backend).
func refusedForGood(err error) bool {
	if err == nil || sdk.IsRetryable(err) {
		return false
	}
	kind := sdk.KindOf(err)
	return kind == sdk.ErrResourceExhausted || kind == sdk.ErrUnimplemented
}

// refuseKey marks de as refusing key for good (refuses), logging it once.
func (d *Daemon) refuseKey(de *deviceEntry, key string, err error) {
	de.mu.Lock()
	_, known := de.tooSmall[key]
	if !known {
		if de.tooSmall == nil {
			de.tooSmall = map[string]string{}
		}
		de.tooSmall[key] = err.Error()
	}
	de.mu.Unlock()
	if !known {
		d.log.Warn("device refused a key for good: it takes none of its partitions again", "device", de.dev.Name(), "key", key, "error", err)
	}
}

// keyTooLarge handles a partition whose device refused its key for good
// (refuseKey has marked it): it goes to a device that has not refused the
// key, or fails, saying why, when none is left.
func (d *Daemon) keyTooLarge(t *task, reason string) {
	for _, de := range d.devices {
		if !de.refuses(t.job.circ) {
			d.retryOrFail(t, reason, true)
			return
		}
	}
	d.failTask(t, reason+" (no other device can take the key)")
}
