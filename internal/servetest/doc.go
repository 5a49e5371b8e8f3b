// Package servetest runs `landlord serve` as a subprocess for end-to-end
// tests, crash tests and benchmarks, whatever the compute provider.
//
// The binary is built once per test binary (the first New builds it) into a
// directory of its own under os.TempDir(); a later test binary removes the
// directories of test binaries that have exited. Each Process has a
// directory of its own with its configuration and its SQLite database (or
// uses the database Options.Database names, a PostgreSQL URL from
// pgtest.NewDatabase, say), so a process killed with Kill and started again
// with Start finds the tenants it left:
//
//	p := servetest.New(t, servetest.Options{Config: "compute:\n  mock: {}\n"})
//	p.Start()
//	tn, err := p.Client().Tenants().Create(ctx, req, client.CreateOptions{})
//	p.Kill()
//	p.Start()
//
// The process's output is kept and logged when the test fails.
package servetest
