package sandbox

import "github.com/darman-dev/darman/internal/sandbox/early"

// Policy is what one command may do, as absolute paths: what the helper
// receives (as JSON) and what the Seatbelt profile is generated from. It
// is defined by internal/sandbox/early, whose decoder the helper reads it
// with.
type Policy = early.Policy

// landlockPathUnixABI is the first Landlock ABI that confines connect(2)
// to pathname Unix sockets.
const landlockPathUnixABI = early.PathUnixABI
