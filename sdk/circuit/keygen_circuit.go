package circuit

import (
	"context"

	"github.com/consensys/gnark/frontend"
)

// KeygenCircuit is Keygen for a circuit outside the example registry: a user's
// own gnark circuit definition def, written as key set name into outDir with a
// development setup (see Keygen for what that means and what is refused).
// NAME.json records name as both the key set's ID and its circuit. A circuit
// whose solver needs hints the host does not know is served with a
// synthesizer plugin ([[circuit]] synthesizer, docs/synthesizer.md).
func KeygenCircuit(ctx context.Context, def frontend.Circuit, name, outDir string) error {
	return keygen(ctx, outDir, def, Metadata{
		Version: MetadataVersion,
		ID:      name,
		Circuit: name,
		Setup:   SetupDevelopment,
	})
}
