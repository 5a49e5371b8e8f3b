// Package server composes landlord's server: from a configuration it opens
// the database, enables the compute providers, and builds the controller,
// the rollout driver, the API and the web console, then serves them until
// its context ends and stops them in order.
//
// It is the composition root that cmd/landlord calls: the command reads the
// flags, the environment and the configuration file into a config.Config
// and the encryption keys into a seal.Keyring, registers the providers of
// its build, and hands them to New. The server reads no flag, no
// environment variable and no configuration file; the files it reads are
// those the configuration names for TLS (the certificate, reloaded when it
// changes, and the CAs).
//
// Errors of a configuration the server refuses match ErrConfig, so that
// the command can tell them from a database or an address it cannot have.
package server
