// Package llmtest is the scripted model server: the one fake in darman's
// tests. It listens on 127.0.0.1 and speaks the real wire formats, so the
// real SDK code runs.
package llmtest
