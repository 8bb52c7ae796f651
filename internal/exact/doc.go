// Package exact gives a genai content a print and an equality that look at every byte of it the
// model can be sent, so that adkctx never takes one content for another.
//
// Print hashes an encoding of the content that tells any two contents apart (every field
// tagged, every string and list prefixed by its length, map entries in key order; a string or
// byte string longer than 128 bytes stands as its length and its digest under the same key,
// every byte read once) with a hash keyed by a seed drawn when the process starts and never
// shown. Contents that differ anywhere — a byte of a text deep in a tool output, an argument, a
// response value, the nesting of a value, the order of parts — get different prints but with
// the probability of a 64-bit collision under a key nobody else knows. Equal compares two contents field by field; where a collision would change what a model
// is sent, a match of prints is confirmed with it.
//
// The walk names the fields of the genai version adkctx was written for; a field it does not
// name (a newer genai's) is read through reflection and its JSON encoding, so a content with one
// is printed and compared exactly too.
package exact
