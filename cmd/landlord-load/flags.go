package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// options are the tool's settings, from its flags.
type options struct {
	address, token string
	tenants        int
	concurrency    int
	config         json.RawMessage
	prefix         string
	pid            int
	// dbPid is the database server's: PostgreSQL's postmaster.
	dbPid   int
	json    bool
	keep    bool
	timeout time.Duration
	idle    time.Duration
	// samples is how many reads of each kind are timed at rest, by
	// readers clients.
	samples int
	readers int
	// loadReadRate is how many reads a second are timed while tenants
	// are created and become ready.
	loadReadRate float64
	// poll is how often the waits for ready and deleted list.
	poll time.Duration
}

// defaultConfig is a compute_config that the mock provider, and every
// provider of the shared container schema, accepts.
const defaultConfig = `{"image":"registry.example/landlord-load:1"}`

// pageSize is the size of the list pages that are timed.
const pageSize = 50

var prefixRule = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// parseFlags reads args (without the program name). getenv supplies the
// defaults of --address and --token.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	var config string
	fs := flag.NewFlagSet("landlord-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: landlord-load [flags]

Creates tenants on a running landlord, waits until they are ready, times list
pages and gets, deletes them and waits until they are gone; see
docs/performance.md.

`)
		fs.PrintDefaults()
	}
	addr := getenv("LANDLORD_ADDR")
	if addr == "" {
		addr = client.DefaultAddress
	}
	fs.StringVar(&o.address, "address", addr, "the API's address (env LANDLORD_ADDR)")
	fs.StringVar(&o.token, "token", getenv("LANDLORD_TOKEN"), "an admin bearer token (env LANDLORD_TOKEN)")
	fs.IntVar(&o.tenants, "n", 100, "tenants to create")
	fs.IntVar(&o.concurrency, "c", 16, "concurrent clients creating and deleting")
	fs.StringVar(&config, "config", defaultConfig, "compute_config of every tenant, JSON")
	fs.StringVar(&o.prefix, "prefix", "", "tenant name prefix; default load-<random>-, unique per run")
	fs.IntVar(&o.pid, "pid", 0, "the server's pid, to sample its CPU time and resident set from /proc")
	fs.IntVar(&o.dbPid, "db-pid", 0, "the database server's pid (PostgreSQL's postmaster), to sample its CPU time and its children's from /proc")
	fs.BoolVar(&o.json, "json", false, "print one JSON report instead of the table")
	fs.BoolVar(&o.keep, "keep", false, "keep the tenants: skip the delete phases")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long")
	fs.DurationVar(&o.idle, "idle", 30*time.Second, "with --pid, the window in which the server's CPU is measured with every tenant ready; 0 skips it")
	fs.IntVar(&o.samples, "samples", 2000, "reads of each kind timed at rest")
	fs.IntVar(&o.readers, "read-c", 1, "concurrent clients timing reads at rest")
	fs.Float64Var(&o.loadReadRate, "load-read-rate", 200, "reads a second timed while tenants are created and become ready; 0 times none")
	fs.DurationVar(&o.poll, "poll", 20*time.Millisecond, "how often the waits for ready and deleted list")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.prefix == "" {
		o.prefix = defaultPrefix()
	}
	var errs []error
	if o.tenants < 1 {
		errs = append(errs, errors.New("-n must be at least 1"))
	}
	if o.concurrency < 1 {
		errs = append(errs, errors.New("-c must be at least 1"))
	}
	if o.readers < 1 {
		errs = append(errs, errors.New("--read-c must be at least 1"))
	}
	if o.samples < 0 || o.loadReadRate < 0 || o.idle < 0 || o.timeout <= 0 || o.poll <= 0 {
		errs = append(errs, errors.New("--samples, --load-read-rate and --idle must not be negative, --timeout and --poll must be positive"))
	}
	if !prefixRule.MatchString(o.prefix) {
		errs = append(errs, fmt.Errorf("--prefix %q: tenant names are lowercase DNS labels, so a prefix is a-z, 0-9 and -, starting with a letter or digit", o.prefix))
	} else if n := len(o.prefix) + len(strconv.Itoa(o.tenants-1)); n > 63 {
		errs = append(errs, fmt.Errorf("--prefix %q: names would be %d characters, over 63", o.prefix, n))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(config), &obj); err != nil || obj == nil {
		errs = append(errs, fmt.Errorf("--config must be a JSON object: %s", config))
	}
	o.config = json.RawMessage(config)
	return o, errors.Join(errs...)
}

// defaultPrefix is load-<6 random letters and digits>-.
func defaultPrefix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("load-")
	for range 6 {
		b = append(b, alphabet[rand.IntN(len(alphabet))])
	}
	return string(append(b, '-'))
}

// name is the name of tenant i: the prefix and i, zero-padded so that names
// sort as they are created.
func (o options) name(i int) string {
	return fmt.Sprintf("%s%0*d", o.prefix, len(strconv.Itoa(o.tenants-1)), i)
}
