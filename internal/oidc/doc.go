// Package oidc checks the JSON Web Tokens of an OpenID Connect identity
// provider, so that people and machines can call landlord with the
// identity their organisation already gives them.
//
// A Verifier trusts one issuer. It finds the issuer's signing keys through
// OpenID Connect discovery (or a configured JWKS URL), fetches them on
// first use and caches them. A token signed by a key it has not seen makes
// it fetch the keys again, at most once per MinRefresh, so that the
// issuer's key rotation needs nothing from an operator while a flood of
// made-up key ids costs the issuer one request per MinRefresh. Keys are
// fetched again after MaxKeyAge, so a key the issuer withdrew stops
// working; while the issuer cannot be reached, the keys already fetched
// go on working.
//
// A token is accepted when it is signed with an asymmetric algorithm
// (never HS* or none) by one of the keys, names the issuer and the
// audience, has not expired, and its groups claim names a group mapped
// to a role. The holder's name, recorded as the actor of their changes,
// is the subject (or ActorClaim).
package oidc
