// Package openapi writes landlord's OpenAPI 3.1 document. It is given the
// operations (package api builds them from its route table, so that a route
// and its description cannot drift apart) and makes the document from them
// and from the wire types their bodies are: the schemas by reflection, with
// what reflection cannot see (what a type or field means, a tighter enum)
// from notes kept here beside the generator.
//
// Building the document fails rather than describe the API wrongly: an
// operation id used twice, a path no tag covers, a body type without a
// note, or a note on a type or field that no body has.
package openapi
