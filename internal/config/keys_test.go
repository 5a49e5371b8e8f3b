package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/config"
)

// A mistake in the file is reported with the file, the line, the key and
// the nearest valid key, in the file's words, never Go's: every mistake at
// once.
func TestKeyMistakes(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       []string // the lines of the error, after "config FILE, "
		kind       error
	}{
		{"a typo at the top", "listn: 127.0.0.1:9000\n", []string{"line 1: listn: unknown key; did you mean listen?"}, config.ErrUnknownKey},
		{"a typo below", "log_level: info\ncontroller:\n  workers: 4\n  max_retires: 3\n",
			[]string{"line 4: controller.max_retires: unknown key; did you mean controller.max_retries?"}, config.ErrUnknownKey},
		{"in a list", "tokens:\n  - name: a\n    secret: b\n    rol: admin\n",
			[]string{"line 4: tokens[0].rol: unknown key; did you mean tokens[0].role?"}, config.ErrUnknownKey},
		{"nothing near", "zzzzzzzz: 1\n",
			[]string{"line 1: zzzzzzzz: unknown key; the top-level keys are, nearest first: "}, config.ErrUnknownKey},
		{"JSON", "{\n  \"listen\": \"127.0.0.1:1\",\n  \"databse\": {\"path\": \"x.db\"}\n}\n",
			[]string{"line 3: databse: unknown key; did you mean database?"}, config.ErrUnknownKey},
		{"a list for a mapping", "controller: [1]\n", []string{"line 1: controller: must be a mapping of keys, not a list"}, config.ErrBadValue},
		{"a mapping for a value", "listen: {a: 1}\n", []string{"line 1: listen: must be a single value, not a mapping of keys"}, config.ErrBadValue},
		{"text for a number", "controller:\n  workers: many\n", []string{`line 2: controller.workers: "many" is not a whole number`}, config.ErrBadValue},
		{"text for a boolean", "insecure: maybe\n", []string{`line 1: insecure: "maybe" is not true or false`}, config.ErrBadValue},
		{"a mistake in a merged mapping", "tokens:\n  - &t {name: a, secret: b, rol: admin}\n  - {<<: *t, name: c}\n", []string{
			"line 2: tokens[0].rol: unknown key; did you mean tokens[0].role?",
			"line 2: tokens[1].rol: unknown key; did you mean tokens[1].role?",
		}, config.ErrUnknownKey},
		{"every mistake", "listn: x\ndatabase:\n  pth: y\ncontroller: {workers: x}\n", []string{
			"line 1: listn: unknown key; did you mean listen?",
			"line 3: database.pth: unknown key; did you mean database.path?",
			`line 4: controller.workers: "x" is not a whole number`,
		}, config.ErrUnknownKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := write(t, tt.body)
			_, _, err := config.Load(path, env(nil))
			if err == nil {
				t.Fatal("Load took it")
			}
			var got []string
			for line := range strings.Lines(err.Error()) {
				rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "config "+path+", ")
				if !ok {
					t.Fatalf("a line does not name the file: %q", line)
				}
				got = append(got, rest)
			}
			if tt.name == "nothing near" && len(got) == 1 && strings.HasPrefix(got[0], tt.want[0]) {
				got[0] = tt.want[0]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("errors.Is(err, %v) is false", tt.kind)
			}
			for _, goWords := range []string{"config.Config", "type ", "int", "!!str", "unmarshal"} {
				if strings.Contains(err.Error(), goWords) {
					t.Errorf("the error speaks Go (%q): %v", goWords, err)
				}
			}
		})
	}
}

// YAML merge keys (<<) are read as the keys they merge, as the decoder
// reads them.
func TestMergeKeys(t *testing.T) {
	cfg, _, err := config.Load(write(t, "tokens:\n  - &t {name: a, secret: b, role: admin}\n  - {<<: *t, name: c}\n  - {<<: [*t], name: d, role: reader}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tokens) != 3 || cfg.Tokens[1].Name != "c" || cfg.Tokens[1].Role != "admin" || cfg.Tokens[2].Role != "reader" {
		t.Errorf("tokens %+v", cfg.Tokens)
	}
}

// Provider blocks are the providers' to check; compute.default is a name.
func TestKeysOfProviderBlocksAreNotChecked(t *testing.T) {
	cfg, _, err := config.Load(write(t, "compute:\n  default: mock\n  mock: {latency: 5ms, anything: [1]}\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if def, _ := cfg.ComputeDefault(); def != "mock" {
		t.Errorf("default %q", def)
	}
}
