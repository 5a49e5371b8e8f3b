package main

// The documentation under docs/, from the schemas and examples/.
//go:generate go run ./internal/docgen
