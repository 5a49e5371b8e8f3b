package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// The parts of the suite, for --only.
const (
	partSQLite   = "sqlite"
	partPostgres = "postgres"
	partReplicas = "replicas"
)

var suiteParts = []string{partSQLite, partPostgres, partReplicas}

// suiteTenants are the sizes of the measurement on each database at
// --scale 1, from issue 19.
var suiteTenants = []int{10000, 100000}

// The suite's other sizes at --scale 1.
const (
	// suiteSamples are the reads of each kind timed at rest.
	suiteSamples = 2000
	// replicaTenants are created in each replica run.
	replicaTenants = 3000
)

// Settings of the replica runs.
const (
	// replicaLatency is what the mock provider adds to every call.
	replicaLatency = 200 * time.Millisecond
	// defaultReplicaWorkers is controller.workers of each replica. With
	// about two provider calls of replicaLatency per tenant on its way to
	// ready, a replica can make at most 16 / 0.4 s = 40 tenants a second
	// ready, far below what its CPU allows: the provider is the
	// bottleneck.
	defaultReplicaWorkers = 16
	defaultLeaseTTL       = 5 * time.Second
)

// suiteOptions are the suite's settings, from its flags.
type suiteOptions struct {
	landlord string
	scale    float64
	parts    []string
	json     bool
	timeout  time.Duration
	// workers is controller.workers of each replica in the replica runs,
	// leaseTTL their controller.lease_ttl.
	workers  int
	leaseTTL time.Duration
}

// tenants is n at the suite's scale: at least 1.
func (o suiteOptions) tenants(n int) int {
	return max(1, int(math.Round(float64(n)*o.scale)))
}

// samples is the reads of each kind timed at rest at the suite's scale: at
// least 20, so that a p99 is not the maximum of a handful.
func (o suiteOptions) samples() int {
	return max(20, int(math.Round(float64(suiteSamples)*o.scale)))
}

func (o suiteOptions) has(part string) bool { return slices.Contains(o.parts, part) }

// parseSuiteFlags reads the arguments after "suite".
func parseSuiteFlags(args []string, stderr io.Writer) (suiteOptions, error) {
	var o suiteOptions
	var only string
	fs := flag.NewFlagSet("landlord-load suite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: landlord-load suite --landlord PATH [flags]

Runs issue 19's measurement and prints its table: starts landlord serve
itself with the mock provider on SQLite and on a throwaway PostgreSQL
cluster, measures 10,000 and 100,000 tenants on each, then 1 replica
against 3 on one PostgreSQL database and 3 with one killed; see
docs/performance.md.

`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.landlord, "landlord", "", "the landlord binary to run (required)")
	fs.Float64Var(&o.scale, "scale", 1, "multiplies every number of tenants and of reads: 0.02 measures 200 and 2,000 tenants and 60 in the replica runs")
	fs.StringVar(&only, "only", strings.Join(suiteParts, ","), "the parts to run, comma-separated: "+strings.Join(suiteParts, ", "))
	fs.BoolVar(&o.json, "json", false, "print one JSON report instead of Markdown")
	fs.DurationVar(&o.timeout, "timeout", 3*time.Hour, "give up after this long")
	fs.IntVar(&o.workers, "workers", defaultReplicaWorkers, "controller.workers of each replica in the replica runs")
	fs.DurationVar(&o.leaseTTL, "lease-ttl", defaultLeaseTTL, "controller.lease_ttl of the replicas in the replica runs")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var errs []error
	if o.landlord == "" {
		errs = append(errs, errors.New("--landlord is required: the landlord binary to run (go build -o /tmp/landlord ./cmd/landlord)"))
	} else if fi, err := os.Stat(o.landlord); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		errs = append(errs, fmt.Errorf("--landlord %s is not an executable file", o.landlord))
	}
	if !(o.scale > 0 && o.scale <= 1) {
		errs = append(errs, fmt.Errorf("--scale %g: want more than 0 and at most 1", o.scale))
	}
	for p := range strings.SplitSeq(only, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
		case !slices.Contains(suiteParts, p):
			errs = append(errs, fmt.Errorf("--only: no part %q; the parts are %s", p, strings.Join(suiteParts, ", ")))
		case !slices.Contains(o.parts, p):
			o.parts = append(o.parts, p)
		}
	}
	if len(o.parts) == 0 {
		errs = append(errs, errors.New("--only names no part"))
	}
	if o.workers < 1 {
		errs = append(errs, errors.New("--workers must be at least 1"))
	}
	if o.timeout <= 0 || o.leaseTTL <= 0 {
		errs = append(errs, errors.New("--timeout and --lease-ttl must be positive"))
	}
	return o, errors.Join(errs...)
}

// command is the suite's command line with these options, the flags at
// their defaults left out.
func (o suiteOptions) command() string {
	args := []string{"landlord-load", "suite", "--landlord", o.landlord}
	if o.scale != 1 {
		args = append(args, "--scale", fmt.Sprint(o.scale))
	}
	if len(o.parts) != len(suiteParts) {
		args = append(args, "--only", strings.Join(o.parts, ","))
	}
	if o.workers != defaultReplicaWorkers {
		args = append(args, "--workers", fmt.Sprint(o.workers))
	}
	if o.leaseTTL != defaultLeaseTTL {
		args = append(args, "--lease-ttl", o.leaseTTL.String())
	}
	if o.json {
		args = append(args, "--json")
	}
	return strings.Join(args, " ")
}
