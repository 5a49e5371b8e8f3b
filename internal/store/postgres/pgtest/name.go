package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// maxTestPart bounds the part of a database name taken from the test name:
// "pgtest_" + 40 + "_" + 12 hex digits stays under PostgreSQL's 63-byte
// identifier limit.
const maxTestPart = 40

// databaseName returns a new database name for the test called testName:
// lower-case letters, digits and underscores, so that it needs no quoting
// anywhere, with 48 random bits against collisions on a shared server.
func databaseName(testName string) string {
	var b strings.Builder
	b.WriteString("pgtest_")
	n := 0
	for _, r := range strings.ToLower(testName) {
		if n == maxTestPart {
			break
		}
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			r = '_'
		}
		b.WriteRune(r)
		n++
	}
	random := make([]byte, 6)
	rand.Read(random) // never fails: see crypto/rand.Read
	b.WriteByte('_')
	b.WriteString(hex.EncodeToString(random))
	return b.String()
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
