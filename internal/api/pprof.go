package api

import (
	"net/http"
	"net/http/pprof"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// pprofPrefix is where the Go runtime's profiles are served. They are for
// operators measuring landlord (docs/performance.md), not part of API v1:
// they are mounted beside the route table, so the OpenAPI document, which is
// generated from that table, does not list them.
const pprofPrefix = "/debug/pprof/"

// pprofHandler serves net/http/pprof to admin tokens: a CPU profile or trace
// costs the server CPU for as long as asked, and heap and goroutine dumps
// show internals. A server without tokens serves loopback only (see
// CheckListen), where every caller is the anonymous admin.
//
// The command line (/debug/pprof/cmdline) is left out on purpose: it may hold
// a database URL with its password, which no token should read.
func (s *Server) pprofHandler() http.Handler {
	mux := http.NewServeMux()
	// Index also serves every named profile under the prefix: allocs,
	// block, goroutine, heap, mutex, threadcreate.
	mux.HandleFunc(pprofPrefix, pprof.Index)
	mux.HandleFunc(pprofPrefix+"profile", pprof.Profile)
	mux.HandleFunc(pprofPrefix+"symbol", pprof.Symbol)
	mux.HandleFunc(pprofPrefix+"trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := s.signIn(w, r)
		if !ok {
			return
		}
		if who.Role != RoleAdmin {
			s.writeProblem(w, r, problem(http.StatusForbidden, wire.CodeForbidden, credential(who)+" may not read profiles; they need the admin role"))
			return
		}
		mux.ServeHTTP(w, r)
	})
}
