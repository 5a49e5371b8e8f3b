package pluginpb_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsCurrent: the checked-in Go code is what protoc and
// the pinned generators make of provider.proto, so that a change of the
// protocol cannot land without its code. It needs protoc (Debian's
// protobuf-compiler); CI sets LANDLORD_REQUIRE_PROTOC=1 to turn its absence
// into a failure.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		if os.Getenv("LANDLORD_REQUIRE_PROTOC") == "1" {
			t.Fatal("protoc is not installed (apt-get install protobuf-compiler), and LANDLORD_REQUIRE_PROTOC=1")
		}
		t.Skip("protoc is not installed (apt-get install protobuf-compiler); skipping the check of the generated code")
	}
	dir := t.TempDir()
	proto, err := os.ReadFile("provider.proto")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "provider.proto"), proto, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--go_out=paths=source_relative:.", "--go-grpc_out=paths=source_relative:.", "provider.proto"}
	for _, gen := range []string{"protoc-gen-go", "protoc-gen-go-grpc"} {
		out, err := exec.Command("go", "tool", "-n", gen).Output()
		if err != nil {
			t.Fatalf("go tool -n %s: %v", gen, err)
		}
		args = append([]string{"--plugin=" + gen + "=" + strings.TrimSpace(string(out))}, args...)
	}
	cmd := exec.Command("protoc", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, out)
	}
	for _, name := range []string{"provider.pb.go", "provider_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s is not what provider.proto generates: run go generate ./sdk/plugin/pluginpb and commit the result", name)
		}
	}
}
