// Command echo is the test workload of the docker and nomad providers'
// tests: a static HTTP server that answers /healthz, echoes its environment
// on /env, exits on /exit and fails its health check after /fail-health. It
// listens on $PORT, 8080 by default.
package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	var unhealthy atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if unhealthy.Load() {
			http.Error(w, "unhealthy", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/env", func(w http.ResponseWriter, _ *http.Request) {
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		_ = json.NewEncoder(w).Encode(env)
	})
	mux.HandleFunc("/fail-health", func(w http.ResponseWriter, _ *http.Request) { unhealthy.Store(true) })
	mux.HandleFunc("/exit", func(w http.ResponseWriter, _ *http.Request) {
		go func() { time.Sleep(50 * time.Millisecond); os.Exit(3) }()
	})
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sig; os.Exit(0) }()
	srv := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		os.Exit(1)
	}
}
