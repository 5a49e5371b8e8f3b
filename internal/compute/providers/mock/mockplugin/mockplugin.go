// Package mockplugin serves the mock provider as a plugin: the same
// provider landlord compiles in, across the plugin boundary, so that the
// conformance suite and landlord's end-to-end tests exercise the protocol
// with a provider whose every behaviour is known. cmd/landlord-mock-plugin
// is its binary.
//
// For tests that change a workload behind the provider's back (crash a
// container, alter its image), the plugin answers a small control API on
// loopback when LANDLORD_MOCK_CONTROL_FILE names a file: it writes the
// control address there. Nothing listens otherwise.
package mockplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/sdk/plugin"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// ControlFileEnv names the environment variable that turns the control API
// on.
const ControlFileEnv = "LANDLORD_MOCK_CONTROL_FILE"

// Serve serves the mock provider as a plugin; it never returns.
func Serve() {
	plugin.Serve(func(ctx context.Context, c plugin.Config) (provider.Provider, error) {
		p, err := mock.New(mock.Options{Block: c.Settings, Logger: c.Logger})
		if err != nil {
			return nil, err
		}
		if file := os.Getenv(ControlFileEnv); file != "" {
			if err := control(p, file); err != nil {
				return nil, fmt.Errorf("mock plugin: control API: %w", err)
			}
		}
		return p, nil
	})
}

// control answers the control API on a loopback port and writes its
// address to file.
func control(p *mock.Provider, file string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /crash", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.FormValue("code"))
		answer(w, p.Crash(r.FormValue("tenant"), r.FormValue("container"), code))
	})
	mux.HandleFunc("POST /tamper", func(w http.ResponseWriter, r *http.Request) {
		change, ok := tampers[r.FormValue("what")]
		if !ok {
			http.Error(w, "no such tamper", http.StatusBadRequest)
			return
		}
		answer(w, p.Tamper(r.FormValue("tenant"), change))
	})
	mux.HandleFunc("POST /remove", func(w http.ResponseWriter, r *http.Request) {
		p.Remove(r.FormValue("tenant"))
	})
	mux.HandleFunc("GET /pid", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, os.Getpid())
	})
	mux.HandleFunc("GET /containers", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, p.Containers(r.FormValue("tenant")))
	})
	go func() { _ = http.Serve(l, mux) }()
	return os.WriteFile(file, []byte(l.Addr().String()), 0o600)
}

func answer(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, provider.ErrTenantNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// tampers are the changes the control API makes to a running workload, by
// name: the first container's image, its VARIANT variable, the second
// container's command, the secrets.
var tampers = map[string]func(w *workload.Workload){
	"image":   func(w *workload.Workload) { w.Containers[0].Image = "example.com/app:hacked" },
	"env":     func(w *workload.Workload) { w.Containers[0].Env["VARIANT"] = "hacked" },
	"command": func(w *workload.Workload) { w.Containers[1].Command = []string{"sh"} },
	"secret":  func(w *workload.Workload) { w.Secrets = nil },
}
