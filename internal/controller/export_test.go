package controller

// Backoff is backoff, for tests.
var Backoff = backoff

// WithoutOwnID is withoutOwnID, for tests.
var WithoutOwnID = withoutOwnID
