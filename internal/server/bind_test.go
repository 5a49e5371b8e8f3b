package server

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// An address another process holds fails start-up before the database is
// created or migrated, and the error names the flag, the variable and the
// configuration key that set the address.
func TestServeBindsBeforeOpeningTheDatabase(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := config.Defaults()
	cfg.Listen = taken.Addr().String()
	cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
	cfg.SetComputeDefault("mock")
	logs := &providertest.LogBuffer{}
	err = serve(context.Background(), cfg, logs)
	if err == nil {
		t.Fatal("serve started on an address another process holds")
	}
	for _, want := range []string{cfg.Listen, "address already in use", "--listen", "LANDLORD_LISTEN", "listen:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %s: %v", want, err)
		}
	}
	if _, err := os.Stat(cfg.Database.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database file was created before the address was bound: %v", err)
	}
	if strings.Contains(logs.String(), "database migrated") {
		t.Errorf("the database was migrated before the address was bound:\n%s", logs)
	}
}
