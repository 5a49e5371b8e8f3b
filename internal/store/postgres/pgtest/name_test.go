package pgtest

import (
	"regexp"
	"strings"
	"testing"
)

func TestDatabaseName(t *testing.T) {
	valid := regexp.MustCompile(`^pgtest_[a-z0-9_]*_[0-9a-f]{12}$`)
	for _, testName := range []string{
		"TestStore",
		"TestStore/create_tenant#01",
		"TestÜnïcode/名前",
		strings.Repeat("TestVeryLongName", 10),
		"",
	} {
		t.Run(testName, func(t *testing.T) {
			a, b := databaseName(testName), databaseName(testName)
			if !valid.MatchString(a) || len(a) > 63 {
				t.Errorf("databaseName(%q) = %q: not a plain identifier of at most 63 bytes", testName, a)
			}
			if a == b {
				t.Errorf("databaseName(%q) returned %q twice", testName, a)
			}
		})
	}
	if got := databaseName("TestStore/Create"); !strings.HasPrefix(got, "pgtest_teststore_create_") {
		t.Errorf("databaseName(TestStore/Create) = %q: does not say which test it is for", got)
	}
}

func TestQuoteIdent(t *testing.T) {
	if got, want := quoteIdent(`a"b`), `"a""b"`; got != want {
		t.Errorf("quoteIdent = %s, want %s", got, want)
	}
}
