// Package textmatch finds where an edit applies in a file: where an edit's
// oldString is (exactly, then by ever more tolerant matchers, each of which
// must find one place only), the region most like it when it is nowhere, so
// the model is shown what the file holds there, and the apply_patch format
// with its chunk matching.
package textmatch
