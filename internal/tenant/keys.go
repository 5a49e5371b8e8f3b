package tenant

import "context"

// KeyStore keeps the installation's random keys in the database, so that
// every landlord process sharing it uses the same ones and they survive
// restarts. A key is never returned by the API or logged.
type KeyStore interface {
	// Key returns the key called name, creating KeySize random bytes on
	// first use. Concurrent first calls, in any process, all get the key one
	// of them created.
	Key(ctx context.Context, name string) ([]byte, error)
}

// KeySize is the length of the keys KeyStore creates, in bytes.
const KeySize = 32
