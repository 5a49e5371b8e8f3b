// Package seal seals the secret values of tenants' compute configs for
// storage (encryption at rest) and opens them again.
//
// A Keyring holds named 256-bit keys, one of them primary. A value is
// sealed with AES-256-GCM under the primary key and a random 96-bit nonce,
// and stored in place of the secret as a JSON string that names its key:
//
//	"llsec:v1:<key id>:<base64url(nonce | ciphertext | tag)>"
//
// The plaintext is the secret's JSON value (a string, or any JSON type),
// and the additional data binds the sealed value to its tenant and its
// JSON pointer, so that a sealed value copied to another tenant or another
// field does not open.
//
// Configs applies a keyring to compute configs: Seal seals every value the
// provider's schema marks writeOnly (the values compute.Schema.Redact
// hides); Open opens every sealed value, whatever the schema says now.
// Stores take a Configs as their tenant.Sealer, so that everything above
// them sees plain configs. Rotate seals every stored config again with the
// primary key (or, with Decrypt, stores it in plain text), beside a
// running landlord.
//
// The keys protect copies of the database (dumps, backups, a stolen disk),
// not a running landlord: its process holds the keys. See docs/storage.md.
package seal
