package keyreg

import (
	"context"
	"sync"

	"github.com/zkhost/zkhost/sdk"
)

// Registry tracks a backend's loaded keys of type K.
type Registry[K any] struct {
	maxInFlight int
	closeKey    func(K)

	mu       sync.Mutex
	keys     map[string]*entry[K]
	inFlight int
}

type entry[K any] struct {
	digest   [32]byte
	value    K
	info     sdk.KeyInfo
	ready    chan struct{} // closed when the load finished
	err      error
	users    int
	unloaded bool
}

// New returns a registry admitting up to maxInFlight proofs at once; closeKey
// releases a key's resources.
func New[K any](maxInFlight int, closeKey func(K)) *Registry[K] {
	return &Registry[K]{maxInFlight: max(1, maxInFlight), closeKey: closeKey, keys: map[string]*entry[K]{}}
}

// Load loads ref with open unless it is loaded already. A concurrent Load of the
// same key waits for the first and shares its result.
func (r *Registry[K]) Load(ctx context.Context, ref sdk.KeyRef, open func() (K, sdk.KeyInfo, error)) (sdk.KeyInfo, error) {
	if ref.ID == "" {
		return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key: empty key ID")
	}
	if ref.Path == "" {
		return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: empty path", ref.ID)
	}
	r.mu.Lock()
	e, ok := r.keys[ref.ID]
	if ok {
		r.mu.Unlock()
		if e.digest != ref.Digest {
			return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: already loaded with digest %x, not %x (unload it first)", ref.ID, e.digest, ref.Digest)
		}
		select {
		case <-e.ready:
		case <-ctx.Done():
			return sdk.KeyInfo{}, sdk.Errorf(sdk.ErrCanceled, "load key %q: %v", ref.ID, ctx.Err())
		}
		return e.info, e.err
	}
	e = &entry[K]{digest: ref.Digest, ready: make(chan struct{})}
	r.keys[ref.ID] = e
	r.mu.Unlock()

	v, info, err := open()
	r.mu.Lock()
	e.value, e.info, e.err = v, info, err
	if err != nil {
		delete(r.keys, ref.ID)
	}
	close(e.ready)
	r.mu.Unlock()
	return info, err
}

// Lease is one admitted proof's hold on a key.
type Lease[K any] struct {
	r *Registry[K]
	e *entry[K]
}

// Key returns the leased key's value.
func (l *Lease[K]) Key() K { return l.e.value }

// Release ends the lease, closing the key if it was unloaded meanwhile. It is
// safe to call more than once.
func (l *Lease[K]) Release() {
	if l == nil || l.r == nil {
		return
	}
	r := l.r
	l.r = nil
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
	l.e.users--
	if l.e.unloaded && l.e.users == 0 {
		r.closeKey(l.e.value)
	}
}

// Acquire admits one proof on key id: it counts it against the in-flight limit
// and pins the key until the lease is released.
func (r *Registry[K]) Acquire(id string) (*Lease[K], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.keys[id]
	if !ok || !isClosed(e.ready) || e.err != nil {
		return nil, sdk.Errorf(sdk.ErrKeyNotLoaded, "prove: key %q is not loaded", id)
	}
	if r.inFlight >= r.maxInFlight {
		return nil, sdk.Errorf(sdk.ErrResourceExhausted, "prove: %d proofs already in flight, the backend takes %d", r.inFlight, r.maxInFlight)
	}
	r.inFlight++
	e.users++
	return &Lease[K]{r: r, e: e}, nil
}

// Unload forgets key id; its resources are closed now, or when the last proof
// using it returns. Unloading an unknown key is not an error.
func (r *Registry[K]) Unload(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.keys[id]
	if !ok || !isClosed(e.ready) {
		return
	}
	delete(r.keys, id)
	e.unloaded = true
	if e.users == 0 {
		r.closeKey(e.value)
	}
}

// UnloadAll unloads every key.
func (r *Registry[K]) UnloadAll() {
	for _, id := range r.IDs() {
		r.Unload(id)
	}
}

// IDs returns the loaded keys' IDs.
func (r *Registry[K]) IDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.keys))
	for id, e := range r.keys {
		if isClosed(e.ready) && e.err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// InFlight returns the number of admitted proofs.
func (r *Registry[K]) InFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight
}

// isClosed reports whether ch is closed, without waiting.
// Deliberately parallel to host/device's isClosed: see why there.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
