// Package clienttest runs a real landlord API for tests of code that uses
// package client: the API server of this module over a SQLite database in a
// temporary directory and the mock compute provider, with the controller,
// and the dispatcher that delivers webhooks, running when asked.
package clienttest
