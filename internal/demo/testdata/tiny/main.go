// Command tiny stands in for landlord in the demo package's tests: a small
// static binary that the demo image runs as /landlord demo serve. It
// answers every request with "tiny" and its arguments on :8080.
package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
)

func main() {
	args := strings.Join(os.Args[1:], " ")
	_ = http.ListenAndServe(":8080", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "tiny %s\n", args)
	}))
}
