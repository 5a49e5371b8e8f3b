package providertest

import (
	"bytes"
	"sync"
)

// LogBuffer collects a provider's log output from concurrent operations;
// pass its Bytes method as Harness.Logs.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes returns a copy of what was written.
func (b *LogBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// String returns what was written.
func (b *LogBuffer) String() string { return string(b.Bytes()) }
