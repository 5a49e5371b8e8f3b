// Package pluginpb is the generated Go code of the landlord provider plugin
// protocol (provider.proto). Plugins written in Go use package plugin and
// never import it; it is public for hosts and plugins in other languages to
// read the protocol from.
package pluginpb

// The generators are pinned as module tools (go.mod); protoc is Debian's
// protobuf-compiler (3.21).
//go:generate sh -c "protoc --plugin=protoc-gen-go=$(go tool -n protoc-gen-go) --plugin=protoc-gen-go-grpc=$(go tool -n protoc-gen-go-grpc) --go_out=paths=source_relative:. --go-grpc_out=paths=source_relative:. provider.proto"
