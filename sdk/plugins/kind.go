package plugins

import (
	"fmt"

	plugin "github.com/hashicorp/go-plugin"

	"github.com/zkhost/zkhost/sdk"
)

// Kind is a kind of plugin the host launches: a backend owns a device, a
// synthesizer owns a circuit's synthesis. Both are started, secured and watched
// the same way (Launch); they differ in the gRPC service they serve.
type Kind int

// Plugin kinds. The zero value is a backend, so a LaunchConfig written before
// synthesizers existed still launches a backend.
const (
	KindBackend Kind = iota
	KindSynthesizer
)

// String returns the kind as logs and errors name it: "backend" or "synthesizer".
// Deliberately parallel to sdk.PartitionFormat's String: see why there.
func (k Kind) String() string {
	switch k {
	case KindBackend:
		return "backend"
	case KindSynthesizer:
		return "synthesizer"
	}
	return fmt.Sprintf("plugin kind(%d)", int(k))
}

// pluginName is the name the kind's plugin is dispensed under.
func (k Kind) pluginName() string {
	if k == KindSynthesizer {
		return sdk.SynthesizerPluginName
	}
	return sdk.BackendPluginName
}

// clientPlugins returns the host's plugin sets of the kind, keyed by protocol
// version (the host's side has no implementation).
func (k Kind) clientPlugins() (map[int]plugin.PluginSet, error) {
	switch k {
	case KindBackend:
		return sdk.BackendPlugins(nil), nil
	case KindSynthesizer:
		return sdk.SynthesizerPlugins(nil), nil
	}
	return nil, fmt.Errorf("plugins: unknown plugin kind %d", int(k))
}
