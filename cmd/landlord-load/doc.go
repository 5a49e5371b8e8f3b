// Command landlord-load measures a running landlord through its public Go
// client: it creates N tenants with C concurrent clients, waits until all
// are ready, times list pages and single gets while they become ready and
// after, waits through an idle window, deletes them all and waits until they
// are gone. Given the server's pid it samples the server's CPU time and
// resident memory from /proc for each phase.
//
// It prints a table, or with --json one JSON report; docs/performance.md
// shows how to run it and what it measured.
package main
