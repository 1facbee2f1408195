package doctor

import (
	"context"
	"errors"
	"fmt"

	"github.com/dustin/go-humanize"

	"github.com/darman-dev/darman/agent/store"
)

// Store reports the session store that opening the data directory gave
// (s, or why not: err).
func Store(ctx context.Context, r *Report, s *store.Store, err error) {
	var damage *store.DamageError
	switch {
	case errors.As(err, &damage):
		r.Add("data", damage.Dir, "fail", err.Error())
		return
	case err != nil:
		r.Add("data", "session store", "fail", err.Error())
		return
	}
	st, err := s.Stats(ctx)
	if err != nil {
		r.Add("data", s.Dir(), "fail", err.Error())
		return
	}
	who := "this process"
	if !s.Owner() {
		who = fmt.Sprintf("served by darman process %d", st.OwnerPID)
	}
	r.Add("data", s.Dir(), "ok", fmt.Sprintf("%d sessions, %s on disk, schema %d, %s",
		st.Sessions, humanize.IBytes(uint64(st.LSMBytes+st.ValueLogBytes)), st.Schema, who))
}
