package controller

// Backoff is backoff, for tests.
var Backoff = backoff
