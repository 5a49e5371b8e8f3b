package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestFlags(t *testing.T) {
	o, err := parseFlags(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.address != "http://127.0.0.1:8080" || o.concurrency != 16 || o.tenants != 100 || string(o.config) != defaultConfig ||
		o.idle != 30*time.Second || o.samples != 2000 || o.readers != 1 {
		t.Errorf("defaults %+v", o)
	}
	if !strings.HasPrefix(o.prefix, "load-") || len(o.prefix) != len("load-abcdef-") {
		t.Errorf("default prefix %q", o.prefix)
	}
	if other, _ := parseFlags(nil, env(nil), io.Discard); other.prefix == o.prefix {
		t.Errorf("two runs share the prefix %q", o.prefix)
	}

	o, err = parseFlags([]string{"-n", "1000", "-c", "4", "--prefix", "bench-", "--keep", "--json"},
		env(map[string]string{"LANDLORD_ADDR": "10.0.0.1:9000", "LANDLORD_TOKEN": "s3cret"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.address != "10.0.0.1:9000" || o.token != "s3cret" || o.tenants != 1000 || o.concurrency != 4 || !o.keep || !o.json {
		t.Errorf("parsed %+v", o)
	}
	if got := o.name(7); got != "bench-007" {
		t.Errorf("name(7) = %q, want bench-007 (padded to sort)", got)
	}
	if got := o.name(999); got != "bench-999" {
		t.Errorf("name(999) = %q", got)
	}

	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"every problem at once", []string{"-n", "0", "-c", "0", "--config", "[1]"}, []string{"-n must", "-c must", "--config must be a JSON object"}},
		{"a prefix that makes no name", []string{"--prefix", "Load_"}, []string{"lowercase DNS label"}},
		{"names too long", []string{"--prefix", strings.Repeat("a", 60), "-n", "10000"}, []string{"over 63"}},
		{"arguments", []string{"extra"}, []string{"unexpected arguments"}},
		{"negative idle", []string{"--idle", "-1s"}, []string{"must not be negative"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args, env(nil), io.Discard)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
