// Package jsonscan reads JSON text token by token, without building a value
// from it, to answer questions a decoder does not: whether a document nests
// deeper than a limit or repeats a key in an object, whether each of its
// strings is text (a decoder turns what is not into U+FFFD), which value
// holds U+0000, and which value lies at a byte offset (to turn an offset
// that encoding/json reports into a JSON pointer). The API checks every
// request body with it before anything decodes the body, so that a hostile
// body is refused cheaply and both stores see the same documents.
package jsonscan
