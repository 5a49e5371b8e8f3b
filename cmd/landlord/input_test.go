package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadConfig(t *testing.T) {
	dir := t.TempDir()
	yamlFile := filepath.Join(dir, "app.yaml")
	jsonFile := filepath.Join(dir, "app.json")
	writeTestFile(t, yamlFile, "# the app\nimage: nginx:latest\nports:\n  - container_port: 80\nenv:\n  DEBUG: \"true\"\n  LEVEL: 3\n")
	writeTestFile(t, jsonFile, "{\n  \"image\": \"nginx:latest\",\n  \"env\": {\"A\": \"1\"}\n}\n")

	for _, tt := range []struct {
		name, value, stdin, want string
	}{
		{"inline JSON", `{"image": "nginx:latest", "ports": [{"container_port": 80}]}`, "", `{"image":"nginx:latest","ports":[{"container_port":80}]}`},
		{"inline YAML", "image: nginx:latest\nreplicas: 2", "", `{"image":"nginx:latest","replicas":2}`},
		{"YAML flow", "{image: nginx, env: {B: b, A: a}}", "", `{"image":"nginx","env":{"B":"b","A":"a"}}`},
		{"YAML keeps key order", "z: 1\na: 2\nm: 3", "", `{"z":1,"a":2,"m":3}`},
		{"YAML scalars", "a: [1, 0x1F, 1_000, 1.50, 1e3, true, ~, 2024-01-01, 'yes', \"x\"]", "", `{"a":[1,31,1000,1.50,1e3,true,null,"2024-01-01","yes","x"]}`},
		{"YAML aliases", "base: &b {image: x}\nsidecar: *b", "", `{"base":{"image":"x"},"sidecar":{"image":"x"}}`},
		{"@file YAML", "@" + yamlFile, "", `{"image":"nginx:latest","ports":[{"container_port":80}],"env":{"DEBUG":"true","LEVEL":3}}`},
		{"@file JSON", "@" + jsonFile, "", `{"image":"nginx:latest","env":{"A":"1"}}`},
		{"file:// URL", "file://" + jsonFile, "", `{"image":"nginx:latest","env":{"A":"1"}}`},
		{"stdin JSON", "-", `{"image": "a"}`, `{"image":"a"}`},
		{"stdin YAML", "-", "image: a\n", `{"image":"a"}`},
		{"byte order mark", "\ufeff{\"image\": \"a\"}", "", `{"image":"a"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readConfig(tt.value, strings.NewReader(tt.stdin))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("readConfig = %s\nwant          %s", got, tt.want)
			}
		})
	}
}

func TestReadConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeTestFile(t, bad, "image: nginx\nenv:\n  A: 1\n  - b\n")
	plain := filepath.Join(dir, "plain.yaml")
	writeTestFile(t, plain, "image: x\n")
	t.Chdir(dir)

	for _, tt := range []struct {
		name, value, stdin string
		line, column       int
		want               string
	}{
		{"JSON syntax", "{\"image\": \"a\"\n  \"env\": {}}", "", 2, 3, `--config: line 2, column 3: JSON: invalid character '"' after object key:value pair`},
		{"JSON cut short", `{"image": "a"`, "", 1, 14, "unexpected end of JSON input"},
		{"YAML mapping in a value", "image: nginx: latest", "", 1, 13, "--config: line 1, column 13: YAML: mapping values are not allowed in this context"},
		{"YAML indentation", "image: a\nenv:\n  A: 1\n B: 2\n", "", 4, 2, "YAML: did not find expected key"},
		{"YAML tab", "image: a\n\tport: 1\n", "", 2, 1, "YAML: found a tab character"},
		{"YAML in a file", "@" + bad, "", 4, 3, "--config " + bad + ": line 4, column 3: YAML: did not find expected key"},
		{"YAML on stdin", "-", "a: b\n c: d\n", 2, 3, "--config - (stdin): line 2, column 3: YAML: mapping values"},
		{"YAML repeated key", "image: a\nimage: b\n", "", 2, 1, `YAML: key "image" is repeated (first at line 1)`},
		{"YAML infinity", "x: .inf", "", 1, 4, ".inf is not a number JSON can hold"},
		{"YAML alias loop", "a: &x [*x]", "", 1, 4, "nested too deeply"},
		{"not an object", "nginx:latest", "", 0, 0, "--config: is a string, not an object of compute settings"},
		{"a list", "[1, 2]", "", 0, 0, "is a list, not an object"},
		{"empty", "  ", "", 0, 0, "--config: is empty"},
		{"empty stdin", "-", "", 0, 0, "--config - (stdin): is empty"},
		{"no such file", "@" + filepath.Join(dir, "nope.yaml"), "", 0, 0, "no such file or directory"},
		{"no file name", "@", "", 0, 0, "--config @: names no file"},
		{"a file without @", "plain.yaml", "", 0, 0, "to read the file plain.yaml, write @plain.yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readConfig(tt.value, strings.NewReader(tt.stdin))
			if err == nil {
				t.Fatalf("readConfig = %s, want an error", got)
			}
			var ie *inputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is a %T", err, err)
			}
			if ie.line != tt.line || ie.column != tt.column {
				t.Errorf("at line %d, column %d; want %d, %d: %v", ie.line, ie.column, tt.line, tt.column, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestWithProvider(t *testing.T) {
	for _, tt := range []struct {
		config, provider, want string
		usage                  bool
	}{
		{`{"image":"a"}`, "", `{"image":"a"}`, false},
		{`{"image":"a"}`, "docker", `{"compute_provider":"docker","image":"a"}`, false},
		{`{}`, "mock", `{"compute_provider":"mock"}`, false},
		{`{"compute_provider":"mock","image":"a"}`, "mock", `{"compute_provider":"mock","image":"a"}`, false},
		{`{"compute_provider":"mock"}`, "docker", "", true},
	} {
		got, err := withProvider([]byte(tt.config), tt.provider)
		if tt.usage {
			if exitCodeOf(err) != exitUsage {
				t.Errorf("withProvider(%s, %s) = %s, %v; want a usage error", tt.config, tt.provider, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("withProvider(%s, %s) = %s, %v; want %s", tt.config, tt.provider, got, err, tt.want)
		}
	}
}

func TestParsePairs(t *testing.T) {
	got, err := parsePairs("label", []string{"tier=gold", "note=a=b", "empty="})
	if err != nil || len(got) != 3 || got["note"] != "a=b" || got["empty"] != "" {
		t.Errorf("parsePairs = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"tier"}, {"=x"}, {"a=1", "a=2"}} {
		if _, err := parsePairs("label", bad); exitCodeOf(err) != exitUsage {
			t.Errorf("parsePairs(%q) = %v, want a usage error", bad, err)
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
